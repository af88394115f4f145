package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable makes stored text (titles, messages, markers: anything an agent
// or a user wrote) safe to print as text: control characters (ESC, CR, BEL,
// backspace, the C1 range) and invalid UTF-8 bytes become visible escapes
// such as \x1b, so a title can neither move the cursor nor restyle the
// terminal. Newlines and tabs stay (a CRLF ending becomes a newline);
// ordinary Unicode is untouched.
func printable(s string) string { return escapeControls(s, true) }

// printableLine is printable for one table cell or one line: newlines and
// tabs are escaped too, so they cannot break the row.
func printableLine(s string) string { return escapeControls(s, false) }

func escapeControls(s string, keepLines bool) string {
	if cleanPrefix(s, keepLines) == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			// a CRLF line ending is a line ending, not a cursor move
		case printableRune(r, keepLines) || r == utf8.RuneError: // U+FFFD itself is ordinary text
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// cleanPrefix is the length of the longest prefix of s that needs no escape.
func cleanPrefix[T string | []byte](s T, keepLines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || keepLines && (c == '\n' || c == '\t') {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError || !printableRune(r, keepLines) {
			return i
		}
		i += size
	}
	return len(s)
}

func printableRune(r rune, keepLines bool) bool {
	return !unicode.IsControl(r) || keepLines && (r == '\n' || r == '\t')
}

// printableWriter passes text through printable: every text answer of a
// command goes through it, so no stored text reaches the terminal raw.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if cleanPrefix(b, true) == len(b) {
		return p.w.Write(b)
	}
	if _, err := io.WriteString(p.w, printable(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
