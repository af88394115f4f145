package history

import (
	"strings"
	"unicode/utf8"
)

// Where streamed text may be cut. A cut at c is safe when, for any text x
// that may follow, Redact(p + x) == Redact(p[:c]) + Redact(p[c:] + x): no
// redaction rule looks across it. Every rule is bound to one line (but the
// private key block), starts at a trigger word (redact_trigger.go), and
// looks back across a cut only at one byte, or over spaces to a key. So a
// cut is safe after a space, tab or newline, or after a non-ASCII character
// not followed by '-', when every trigger word before it is settled: the
// word has ended and what it may govern (a separator and its value, a
// flag's or bearer's value, an Authorization header to its line's end) has
// arrived in full, and the character after it too.

// safeCut returns the last safe cut in p, which starts at a safe cut. body
// is the offset at which the body of a private key block begins (its
// header has arrived and its end line has not), or -1.
func safeCut(p string) (cut, body int) {
	hold, body := len(p), -1
	var settled []span // what settled words govern: no cut inside
	if mayHoldSecret(p) {
		for ws := 0; ws < hold; {
			we := wordEnd(p, ws)
			if reach, open := wordReach(p, ws, we); open {
				hold = ws
			} else if reach > 0 {
				settled = append(settled, span{ws, reach})
			}
			ws = nextWord(p, we)
		}
	}
	// Private key blocks come first, as in Redact: the body of a block whose
	// header has arrived is dropped however the text before it stands.
	for k := strings.Index(p, "-----BEGIN "); k >= 0; {
		ws := wordStart(p, k)
		reach, open, b := keyBlockReach(p, k)
		switch {
		case b >= 0:
			return lastBoundary(p, min(hold, ws), settled), b
		case open:
			hold = min(hold, ws)
		default:
			settled = append(settled, span{ws, reach})
		}
		next := strings.Index(p[k+1:], "-----BEGIN ")
		if next < 0 {
			break
		}
		k += 1 + next
	}
	return lastBoundary(p, hold, settled), -1
}

// lastBoundary returns the last position at or before limit where p may be
// cut, outside every settled span, or 0.
func lastBoundary(p string, limit int, settled []span) int {
	for c := limit; c > 0; c-- {
		if !isBoundary(p, c) {
			continue
		}
		inside := false
		for _, s := range settled {
			if s.start < c && c < s.end {
				inside, c = true, s.start+1
				break
			}
		}
		if !inside {
			return c
		}
	}
	return 0
}

// isBoundary reports whether p[c-1] is a byte no rule looks back across.
func isBoundary(p string, c int) bool {
	switch b := p[c-1]; {
	case b == ' ' || b == '\t' || b == '\n':
		return true
	case b >= utf8.RuneSelf:
		// The end of a multi-byte character: no rule reads it as part of a
		// word, but a flag ("--token") right after it would not be one.
		return c < len(p) && utf8.RuneStart(p[c]) && p[c] != '-'
	}
	return false
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

func wordEnd(p string, i int) int {
	for i < len(p) && !isSpace(p[i]) {
		i++
	}
	return i
}

func wordStart(p string, i int) int {
	for i > 0 && !isSpace(p[i-1]) {
		i--
	}
	return i
}

func nextWord(p string, i int) int {
	for i < len(p) && isSpace(p[i]) {
		i++
	}
	return i
}

// wordReach says how far what the word p[ws:we] may govern reaches: 0 for a
// word with no trigger, open when it is not settled yet.
func wordReach(p string, ws, we int) (reach int, open bool) {
	for t := ws; t < we; t++ {
		n := triggerAt(p, t)
		if n == 0 {
			continue
		}
		if we == len(p) {
			return 0, true
		}
		reach = max(reach, we+1)
		r, open := governedReach(p, ws, t, n)
		if open {
			return 0, true
		}
		reach = max(reach, r)
	}
	return reach, false
}

// governedReach is how far the trigger p[t:t+n] in the word starting at ws
// may govern: a separator and a value (KEY=v, "key": "v"), a flag's or
// bearer's value (--token v, Bearer v), an Authorization header's value.
func governedReach(p string, ws, t, n int) (reach int, open bool) {
	k := t
	for k < len(p) && isKeyByte(p[k]) {
		k++
	}
	reach, open = separatorReach(p, k)
	if open {
		return 0, true
	}
	if strings.Contains(p[ws:t], "--") || hasPrefixFold(p, t, "bearer") {
		r, open := spacedValueReach(p, k)
		if open {
			return 0, true
		}
		reach = max(reach, r)
	}
	if hasPrefixFold(p, t, "authorization") {
		r, open := headerReach(p, t+len("authorization"))
		if open {
			return 0, true
		}
		reach = max(reach, r)
	}
	return reach, false
}

// separatorReach follows a key that ends at p[k]: [\]["'][ \t]*[=:] value.
func separatorReach(p string, i int) (int, bool) {
	if i < len(p) && p[i] == '\\' {
		i++
	}
	if i < len(p) && (p[i] == '"' || p[i] == '\'') {
		i++
	}
	i = skipBlanks(p, i)
	switch {
	case i == len(p):
		return 0, true
	case p[i] != '=' && p[i] != ':':
		return 0, false
	}
	return valueReach(p, i+1)
}

// spacedValueReach follows a flag or "bearer" that ends at p[i]: [ \t]+ value.
func spacedValueReach(p string, i int) (int, bool) {
	switch {
	case i == len(p):
		return 0, true
	case p[i] != ' ' && p[i] != '\t':
		return 0, false
	}
	return valueReach(p, i)
}

// headerReach follows "authorization" that ends at p[i]: [ \t]*: and a value
// that runs to a quote, a backslash or the end of the line.
func headerReach(p string, i int) (int, bool) {
	i = skipBlanks(p, i)
	switch {
	case i == len(p):
		return 0, true
	case p[i] != ':':
		return 0, false
	}
	if j := strings.IndexAny(p[i+1:], "\"'\\\r\n"); j >= 0 {
		return i + 1 + j + 1, false
	}
	return 0, true
}

// valueReach returns the end of the value at p[i] (after blanks) and the
// byte after it, or open when that has not arrived. A quoted value ends at
// its closing quote or the end of the line; any other at a space.
func valueReach(p string, i int) (int, bool) {
	i = skipBlanks(p, i)
	if i == len(p) {
		return 0, true
	}
	var j, stop int // j: index of the byte that ends the value, from its search start
	switch {
	case p[i] == '\n' || p[i] == '\r' || p[i] == '\f':
		return i + 1, false // no value
	case p[i] == '\'':
		j = strings.IndexAny(p[i+1:], "'\n")
		stop = i + 1 + j
	case strings.HasPrefix(p[i:], `\"`):
		j = strings.IndexAny(p[i+2:], "\"\n")
		stop = i + 2 + j
	case p[i] == '"':
		j = closingQuote(p[i+1:])
		stop = i + 1 + j
	default:
		j = strings.IndexAny(p[i:], " \t\n\r\f")
		stop = i + j
	}
	if j < 0 {
		return 0, true
	}
	return stop + 1, false
}

// closingQuote returns the index in s of the '"' (or newline) that ends a
// double-quoted value whose inside s starts, skipping backslash escapes, or -1.
func closingQuote(s string) int {
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if j+1 < len(s) && s[j+1] == '\n' {
				return j + 1
			}
			j++
		case '"', '\n':
			return j
		}
	}
	return -1
}

func skipBlanks(p string, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
		i++
	}
	return i
}

// keyBlockReach follows "-----BEGIN " at p[k]: a private key block's header
// is -----BEGIN [A-Z ]*PRIVATE KEY-----. body is where the block's body
// begins when the header is complete and the end line is not there yet.
func keyBlockReach(p string, k int) (reach int, open bool, body int) {
	i := k + len("-----BEGIN ")
	for i < len(p) && (p[i] == ' ' || p[i]-'A' < 26) {
		i++
	}
	switch {
	case i == len(p):
		return 0, true, -1
	case !strings.HasSuffix(p[k:i], "PRIVATE KEY"):
		return i + 1, false, -1
	case len(p)-i < 5 && strings.HasPrefix("-----", p[i:]):
		return 0, true, -1
	case !strings.HasPrefix(p[i:], "-----"):
		return i + 1, false, -1
	}
	he := i + 5
	rest := p[he:]
	if r := strings.TrimPrefix(rest, Redacted); strings.HasPrefix(r, "-----END ") {
		rest = r
	}
	m := keyBlockEnd().FindStringIndex(rest)
	if m == nil || m[0] != 0 {
		return 0, false, he
	}
	// A block already closed (its body already replaced): settled once the
	// word after its end line has ended.
	we := wordEnd(p, len(p)-len(rest)+m[1])
	if we == len(p) {
		return 0, true, -1
	}
	return we + 1, false, -1
}

// releasable returns how much of the held text p (which starts at a safe cut
// and holds no safe cut) can be written now because no redaction can ever
// cover it, whatever follows: p holds no trigger, so it can only be covered
// by a provider token that starts in it, where a token prefix could still
// be completed. This writes a message's last word before the agent goes
// quiet, unless the word may yet become a token ("sk", "gh").
func releasable(p string) int {
	if mayHoldSecret(p) || strings.Contains(p, "-----BEGIN") {
		return 0
	}
	for i := 0; i < len(p); i++ {
		if i > 0 && isWordByte(p[i-1]) {
			continue
		}
		for _, t := range tokenPrefixes {
			if len(p)-i < len(t) && strings.HasPrefix(t, p[i:]) {
				return i
			}
		}
	}
	return len(p)
}
