package history

import (
	"regexp"
	"strings"
	"sync"

	"github.com/kandev/kandev/eventlog"
)

// MaxHeldBytes bounds the text one stream holds back. A stretch that is
// still open when it reaches the bound (a header value, quoted value or
// token that goes on and on without ending) is written as Redacted and the
// rest of its line is dropped: over-redaction, never a leak.
const MaxHeldBytes = 16 << 10

// StreamRedactor redacts streamed agent text over the text as a reader
// assembles it, not chunk by chunk, so a secret split across chunks is
// caught whole. Of a run of agent_message (or agent_thought) chunks of one
// turn it holds back only the unwritten tail that could still be part of a
// secret, never more than MaxHeldBytes, and writes the rest redacted. Any
// other event, including a chunk of the other stream or of another turn,
// first releases what is held, so nothing is lost and order is kept. The
// chunks it writes for a run concatenate to Redact of the run's text.
//
// The zero value is ready to use; it is not safe for concurrent use.
type StreamRedactor struct {
	st textStream
}

// Events takes events about to be appended, in order, and returns the events
// to append instead: chunks carry only the text that is safe to write (a
// chunk whose text is all held back is left out), and held text is released
// as a chunk of its own before any other event.
func (r *StreamRedactor) Events(evs []*eventlog.Event) []*eventlog.Event {
	if !r.st.held() && !hasChunk(evs) {
		return evs
	}
	out := evs[:0:0]
	for _, e := range evs {
		if !isChunk(e) {
			out = append(r.st.flushInto(out), e)
			continue
		}
		if t := r.st.template; t.Type != e.Type || t.TurnID != e.TurnID || t.ChildID != e.ChildID || t.Role != e.Role || t.Source != e.Source {
			out = r.st.flushInto(out)
		}
		r.st.template = eventlog.Event{Type: e.Type, Role: e.Role, TurnID: e.TurnID, ChildID: e.ChildID, Source: e.Source}
		if text := r.st.push(e.Content); text != "" {
			e.Content = text
			out = append(out, e)
		}
	}
	return out
}

// isChunk: a streamed piece of the agent's or a child's text (a child's
// prompt, role user, and its answer to its parent come whole, but are
// redacted the same way).
func isChunk(e *eventlog.Event) bool {
	switch e.Type {
	case eventlog.EventAgentMessage, eventlog.EventAgentThought, eventlog.EventChildMessage, eventlog.EventChildThought:
		return true
	}
	return false
}

func hasChunk(evs []*eventlog.Event) bool {
	for _, e := range evs {
		if isChunk(e) {
			return true
		}
	}
	return false
}

// textStream is one stream's state: the held text, and whether the stream
// is inside a private key block or skipping the rest of an over-long line.
type textStream struct {
	template eventlog.Event // type, role and turn of the stream's chunks
	// pending is the text since the last safe cut: its first written bytes
	// are already out (no redaction can ever cover them: see releasable),
	// the rest is held because a secret may still begin in it.
	pending  string
	written  int
	block    keyBlock
	skipLine bool
}

func (st *textStream) held() bool {
	return len(st.pending) > st.written || st.block.open || st.skipLine
}

// emit writes the redaction of pending[:cut] but for what is already out.
func (st *textStream) emit(out *strings.Builder, cut int) {
	if cut > st.written {
		out.WriteString(Redact(st.pending[:cut])[st.written:])
	}
	st.pending = st.pending[cut:]
	st.written = max(0, st.written-cut)
}

// push takes the next chunk of text and returns what can be written now.
func (st *textStream) push(text string) string {
	if st.skipLine {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return ""
		}
		st.skipLine = false
		text = text[i:]
	}
	if st.block.open {
		if text = st.swallow(text); st.block.open {
			return ""
		}
	}
	st.pending += text
	var out strings.Builder
	for {
		cut, body := safeCut(st.pending)
		st.emit(&out, cut)
		if body < 0 {
			break
		}
		// A private key block has begun: its body is dropped as it arrives,
		// so the bound on held text does not apply to it.
		rest := st.pending[body-cut:]
		st.pending = st.pending[:body-cut]
		st.block = keyBlock{open: true}
		if rest = st.swallow(rest); st.block.open {
			break
		}
		st.pending += rest
	}
	if len(st.pending) > MaxHeldBytes && !st.block.open {
		out.WriteString(Redacted)
		st.pending, st.written, st.skipLine = "", 0, true
	}
	if e := releasable(st.pending); e > st.written && !st.block.open {
		out.WriteString(st.pending[st.written:e])
		st.written = e
	}
	return out.String()
}

// flushInto writes everything held as one more chunk, and resets the stream.
func (st *textStream) flushInto(out []*eventlog.Event) []*eventlog.Event {
	if st.block.open && st.block.dropped+len(st.block.window) > 0 {
		st.pending += Redacted // the block runs to the end of the text
	}
	var b strings.Builder
	st.emit(&b, len(st.pending))
	e := st.template
	*st = textStream{}
	if b.Len() == 0 {
		return out
	}
	e.Content = b.String()
	return append(out, &e)
}

// keyBlock follows the body of a private key block, which is dropped: only
// the last bytes are kept, to find the line that ends the block.
type keyBlock struct {
	open    bool
	dropped int    // body bytes dropped before window
	window  string // the body's last bytes, where an end line may be starting
}

// keyBlockWindow is the most of a block's body kept to find its end line;
// real end lines ("-----END ENCRYPTED PRIVATE KEY-----") are far shorter.
const keyBlockWindow = 256

var keyBlockEnd = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`-----END [A-Z ]*PRIVATE KEY-----`)
})

// swallow drops text that belongs to the open block's body. When the block
// ends, it adds Redacted for a non-empty body to the held text (as Redact
// would write it) and returns the text from the end line on.
func (st *textStream) swallow(text string) string {
	b := &st.block
	s := b.window + text
	if m := keyBlockEnd().FindStringIndex(s); m != nil {
		if b.dropped+m[0] > 0 {
			st.pending += Redacted
		}
		*b = keyBlock{}
		return s[m[0]:]
	}
	keep := min(len(s), keyBlockWindow)
	b.dropped += len(s) - keep
	b.window = s[len(s)-keep:]
	return ""
}
