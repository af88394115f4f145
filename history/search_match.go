package history

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// matcher finds a query in decoded event text, and picks the log lines
// that may hold it before any line is decoded.
type matcher interface {
	// index is the span of the first match in text; start is -1 when none.
	index(text string) (start, end int)
	// scan calls fn for each line of block (whole lines) that may hold a
	// match; partial is set when it may hold only a piece of one (a match
	// across streamed chunks), or is not known to hold all of it.
	scan(block []byte, fn func(line []byte, partial bool))
}

// literal is a word found ignoring the case of ASCII letters. In a log line
// it is looked for as the log writer escapes it (JSON, with <, > and &
// escaped), by its rarest byte first.
type literal struct {
	word   string // lowercase
	raw    string // lowercase, escaped as in a log line
	anchor int    // index in raw of its rarest byte
}

func newLiteral(q string) *literal {
	esc, _ := json.Marshal(q) // the escaping of encoding/json, which writes the log
	l := &literal{word: lowerASCIIString(q), raw: lowerASCIIString(string(esc[1 : len(esc)-1]))}
	for i := 1; i < len(l.raw); i++ {
		if byteRank(l.raw[i]) < byteRank(l.raw[l.anchor]) {
			l.anchor = i
		}
	}
	return l
}

func (l *literal) index(text string) (int, int) {
	if i := indexFold(text, l.word, 0); i >= 0 {
		return i, i + len(l.word)
	}
	return -1, -1
}

func (l *literal) scan(b []byte, fn func(line []byte, partial bool)) {
	lo := l.raw[l.anchor]
	up := upperASCII(lo)
	next1, next2 := -1, -1 // the next lo and up at or after pos (len(b): none)
	partialEnd := 0        // the end of the last line reported partial
	for pos := l.anchor; pos < len(b); {
		if next1 < pos {
			next1 = indexByteFrom(b, lo, pos)
		}
		if next2 < pos {
			next2 = len(b)
			if up != lo {
				next2 = indexByteFrom(b, up, pos)
			}
		}
		p := min(next1, next2)
		if p == len(b) {
			return
		}
		full := hasPrefixFold(b, p-l.anchor, l.raw)
		if !full && (p < partialEnd || !l.nearStringEdge(b, p)) {
			pos = p + 1
			continue
		}
		ls := bytes.LastIndexByte(b[:p], '\n') + 1
		le := p + bytes.IndexByte(b[p:], '\n') + 1 // a block ends with a newline
		fn(b[ls:le], !full)
		if full {
			pos = le + l.anchor
		} else {
			pos, partialEnd = p+1, le // a whole match may follow in the line
		}
	}
}

// nearStringEdge reports whether the byte at p may belong to a piece of the
// word that starts or ends a streamed chunk's text: the bytes from the start
// of the "content" string to p are the word's bytes before its anchor (the
// chunk starts inside the word), or the line's last string (kandev writes a
// chunk's content as its line's last field) ends with the word's first
// bytes, the anchor among them (the word starts in this chunk).
func (l *literal) nearStringEdge(b []byte, p int) bool {
	const key = `"content":"`
	from := max(0, p-l.anchor-len(key))
	if i := bytes.LastIndex(b[from:p], []byte(key)); i >= 0 {
		start := from + i + len(key)
		if hasPrefixFold(b[:p], start, l.raw[l.anchor-(p-start):l.anchor]) {
			return true
		}
	}
	// A newline byte only ends a line: "}\n closes the line's last string.
	rest := len(l.raw) - l.anchor
	if i := bytes.Index(b[p:min(len(b), p+rest+3)], []byte("\"}\n")); i >= 0 && i <= rest {
		return hasPrefixFold(b, p-l.anchor, l.raw[:l.anchor+i])
	}
	return false
}

func indexByteFrom(b []byte, c byte, from int) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return len(b)
}

// byteRank orders bytes by how often they occur in a log line, rarest
// first: the literal scan jumps between occurrences of its rarest byte, in
// either case. Letters of the keys every line has ("seq", "timestamp",
// "type", ...) and of its timestamp (T, Z) come after the others.
func byteRank(c byte) int {
	const letters = "jxkvbwfghqzypmucdlrsnioate"
	switch {
	case c >= 0x80:
		return 0
	case c >= 'a' && c <= 'z':
		return 1 + strings.IndexByte(letters, c)
	case c >= '0' && c <= '9', strings.IndexByte(` ":,{}_-./\`, c) >= 0:
		return 40 // the punctuation and digits of every line
	}
	return 1
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func lowerASCIIString(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII(c)
	}
	return string(b)
}

// pattern is a regular expression (RE2 syntax), matched against the text
// of every searched event: every line is picked, every message assembled.
type pattern struct{ re *regexp.Regexp }

func (p pattern) index(text string) (int, int) {
	if m := p.re.FindStringIndex(text); m != nil {
		return m[0], m[1]
	}
	return -1, -1
}

func (p pattern) scan(b []byte, fn func(line []byte, partial bool)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		fn(b[:i], false)
		b = b[i:]
	}
}
