package history

import "sync"

// secretTriggers are lowercase substrings at least one of which occurs in any
// text a redaction rule can change. Redact checks for them first, in one pass
// without regular expressions, because it runs on every streamed chunk.
var secretTriggers = []string{
	// key, header and flag names
	"key", "token", "secret", "passw", "passphrase", "credential", "auth", "bearer",
	// URL userinfo
	"://",
	// provider token shapes
	"sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat",
	"xox", "aiza", "akia", "asia", "hf_", "npm_", "glpat", "eyj",
}

// triggerIndex finds secretTriggers case-insensitively: a bit per lowercase
// byte pair that starts some trigger, then the triggers by first byte.
type triggerIndex struct {
	pairs   [1 << 16 / 64]uint64
	byFirst [256][]string
}

// triggers is built on first use (14 KB that every kandev command would
// otherwise allocate at start-up, redacting or not).
var triggers = sync.OnceValue(func() *triggerIndex { return newTriggerIndex(secretTriggers) })

func newTriggerIndex(words []string) *triggerIndex {
	x := &triggerIndex{}
	for _, w := range words {
		if len(w) < 3 {
			panic("history: secret trigger shorter than 3 bytes: " + w)
		}
		p := uint16(w[0])<<8 | uint16(w[1])
		x.pairs[p>>6] |= 1 << (p & 63)
		x.byFirst[w[0]] = append(x.byFirst[w[0]], w)
	}
	return x
}

func lowerASCII(c byte) byte {
	if c-'A' < 26 {
		return c + 'a' - 'A'
	}
	return c
}

// mayHoldSecret reports whether s contains a secret trigger. False means no
// redaction rule can match s.
func mayHoldSecret[T ~string | ~[]byte](s T) bool {
	x := triggers()
	if len(s) < 3 {
		return false
	}
	next := lowerASCII(s[0])
	for i := 0; i+2 < len(s); i++ {
		c := next
		next = lowerASCII(s[i+1])
		p := uint16(c)<<8 | uint16(next)
		if x.pairs[p>>6]&(1<<(p&63)) == 0 {
			continue
		}
		for _, w := range x.byFirst[c] {
			if hasPrefixFold(s, i, w) {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold reports whether s[i:] starts with the lowercase word w, ignoring
// ASCII case.
func hasPrefixFold[T ~string | ~[]byte](s T, i int, w string) bool {
	if len(s)-i < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		if lowerASCII(s[i+j]) != w[j] {
			return false
		}
	}
	return true
}

// triggerAt returns the length of the secret trigger that starts at s[i],
// ignoring ASCII case, or 0.
func triggerAt(s string, i int) int {
	if i+2 >= len(s) {
		return 0
	}
	c := lowerASCII(s[i])
	p := uint16(c)<<8 | uint16(lowerASCII(s[i+1]))
	x := triggers()
	if x.pairs[p>>6]&(1<<(p&63)) == 0 {
		return 0
	}
	for _, w := range x.byFirst[c] {
		if hasPrefixFold(s, i, w) {
			return len(w)
		}
	}
	return 0
}
