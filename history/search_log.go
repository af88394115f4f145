package history

import (
	"bytes"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// logScan is the search of one session's log. The first read decodes only
// the lines the matcher picks; the streamed chunks of an assistant message
// are matched as the message they make (a match may span chunks, and so
// may a secret that only the whole text shows), in a second read of the
// log made only for the turns the first one marked.
type logScan struct {
	m       matcher
	session *state.Session
	hits    []SearchHit
	skipped int
	err     error
	turns   map[string]bool // turns whose messages the second read assembles
	lastBad []byte          // the last line counted as skipped
	run     messageRun
	fences  [][2]int64 // (to_seq, seq) of each rewind: what it hides lies between
}

// messageRun is the text of consecutive chunks of one type in one turn.
type messageRun struct {
	typ, turn string
	text      strings.Builder
	seqs      []int64
	offsets   []int // where each chunk's text starts
}

// line handles a line the matcher picked.
func (f *logScan) line(line []byte, partial bool) {
	if !gjson.ValidBytes(line) {
		if len(bytes.TrimSpace(line)) > 0 && (f.lastBad == nil || &line[0] != &f.lastBad[0]) {
			f.skipped++
			f.lastBad = line
		}
		return
	}
	r := gjson.GetManyBytes(line, "type", "seq", "turn_id", "content", "tool_name")
	switch typ := r[0].String(); typ {
	case eventlog.EventAgentMessage, eventlog.EventAgentThought, eventlog.EventChildMessage, eventlog.EventChildThought:
		if f.turns == nil {
			f.turns = map[string]bool{}
		}
		f.turns[r[2].String()] = true
	case eventlog.EventUserMessage, eventlog.EventToolResult, eventlog.EventChildToolResult:
		if !partial {
			f.match(typ, r[1].Int(), Redact(r[3].String()), nil, nil)
		}
	case eventlog.EventToolCall, eventlog.EventChildToolCall:
		if !partial {
			f.match(typ, r[1].Int(), Redact(r[4].String()), nil, nil)
		}
	}
}

// findRewinds notes the rewind events of a block (read only for sessions
// that were rewound or cleared).
func (f *logScan) findRewinds(b []byte) {
	key := []byte(`"type":"` + eventlog.EventRewind + `"`)
	for i := bytes.Index(b, key); i >= 0; i = bytes.Index(b, key) {
		start := bytes.LastIndexByte(b[:i], '\n') + 1
		end := i + bytes.IndexByte(b[i:], '\n') + 1
		r := gjson.GetManyBytes(b[start:end], "seq", "to_seq")
		f.fences = append(f.fences, [2]int64{r[1].Int(), r[0].Int()})
		b = b[end:]
	}
}

// markRewound marks the hits that a rewind hides. A rewind hidden by a
// later one fenced only what the later one hides too, so a hit is hidden
// exactly when some rewind's range holds it.
func (f *logScan) markRewound() {
	for i := range f.hits {
		for _, r := range f.fences {
			if f.hits[i].Seq > r[0] && f.hits[i].Seq < r[1] {
				f.hits[i].Rewound = true
			}
		}
	}
}

// assemble gathers the message runs of the marked turns from a block of the
// second read.
func (f *logScan) assemble(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		f.assembleLine(b[:i])
		b = b[i:]
	}
}

func (f *logScan) assembleLine(line []byte) {
	typ := gjson.GetBytes(line, "type").String()
	if !streamed(typ) || !gjson.ValidBytes(line) {
		f.flush() // any other event ends the message in progress
		return
	}
	r := gjson.GetManyBytes(line, "turn_id", "seq", "content", "child_id")
	turn := r[0].String() + "\x00" + r[3].String() // a child's stream is its own message
	if typ != f.run.typ || turn != f.run.turn {
		f.flush()
		f.run.typ, f.run.turn = typ, turn
	}
	if !f.turns[r[0].String()] {
		return
	}
	f.run.seqs = append(f.run.seqs, r[1].Int())
	f.run.offsets = append(f.run.offsets, f.run.text.Len())
	f.run.text.WriteString(r[2].String())
}

// streamed reports whether events of type typ are chunks of a message.
func streamed(typ string) bool {
	switch typ {
	case eventlog.EventAgentMessage, eventlog.EventAgentThought, eventlog.EventChildMessage, eventlog.EventChildThought:
		return true
	}
	return false
}

// flush matches the run in progress, redacted as a whole, and ends it.
func (f *logScan) flush() {
	run := &f.run
	if len(run.seqs) > 0 {
		text := run.text.String()
		red := Redact(text)
		seqs, offsets := run.seqs, run.offsets
		if red != text { // offsets moved: the message is named by its first chunk
			seqs, offsets = seqs[:1], offsets[:1]
		}
		f.match(run.typ, 0, red, seqs, offsets)
	}
	run.typ, run.turn = "", ""
	run.text.Reset()
	run.seqs, run.offsets = run.seqs[:0], run.offsets[:0]
}

// match records a hit when text matches. The hit's seq is seq, or the seq
// of the chunk (of seqs, starting at offsets) where the match starts.
func (f *logScan) match(typ string, seq int64, text string, seqs []int64, offsets []int) {
	start, end := f.m.index(text)
	if start < 0 {
		return
	}
	if len(seqs) > 0 {
		seq = seqs[sort.SearchInts(offsets, start+1)-1]
	}
	snip, at := snippet(text, start, end)
	f.hits = append(f.hits, SearchHit{SessionID: f.session.ID, Seq: seq, Type: typ, Snippet: snip, Match: at,
		Title: Redact(f.session.Title), LastActivityAt: f.session.LastActivityAt})
}

// Snippet context around a match, in bytes.
const (
	snippetBefore = 60
	snippetAfter  = 80
)

// snippet is the match in text with some context on one line (runs of
// white space become one space), and where the match is in it.
func snippet(text string, start, end int) (string, [2]int) {
	from := max(0, start-snippetBefore)
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	to := min(len(text), end+snippetAfter)
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	pre := oneLine(text[from:start])
	if from > 0 {
		pre = "…" + strings.TrimLeft(pre, " ")
	}
	mid := oneLine(text[start:end])
	post := oneLine(text[end:to])
	if to < len(text) {
		post = strings.TrimRight(post, " ") + "…"
	}
	return pre + mid + post, [2]int{len(pre), len(pre) + len(mid)}
}

// oneLine replaces each run of white space (newlines, tabs) by one space.
func oneLine(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
