package history

import "unicode/utf8"

// truncatedMark is appended to text that was cut to fit a bound.
const truncatedMark = " [truncated]"

// cutUTF8 returns the longest prefix of s that is at most n bytes long and does
// not split a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// Clip returns s if it fits in n bytes, else its longest prefix of at most
// n bytes that does not split a UTF-8 sequence, followed by "...". It is the
// one way kandev shortens text for display.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "..."
}

// capUTF8 returns s unchanged if it fits in n bytes, else a prefix cut on a rune
// boundary followed by truncatedMark, the whole at most n bytes.
func capUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len(truncatedMark) {
		return cutUTF8(s, n)
	}
	return cutUTF8(s, n-len(truncatedMark)) + truncatedMark
}
