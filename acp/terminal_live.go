package acp

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
)

// A terminal's output is recorded while its command runs, not only when it
// exits: every liveTerminalEvery, what it printed since goes to the log as
// an update of its tool call (the shape codex-acp's own terminal output
// takes), so kandev attach and the command that follows the turn show it as
// it comes. At most liveTerminalOutput bytes per terminal are recorded so;
// the result, when the command exits, carries the output kept (its end).
// The live text passes a stream redactor of its own, so a secret printed
// across two flushes is caught whole.

// liveTerminalOutput bounds the output of one terminal recorded live.
const liveTerminalOutput = 64 << 10

// liveTerminalEvery is how often live output is recorded.
const liveTerminalEvery = 200 * time.Millisecond

// liveCutNote ends the live output of a terminal that printed more.
const liveCutNote = "\n[live output stops here; the result keeps the end]\n"

// liveOutput records one terminal's output as it is produced.
type liveOutput struct {
	mu      sync.Mutex
	push    func(*eventlog.Event)
	call    eventlog.Event // the tool call the output belongs to
	pending []byte
	taken   int // bytes taken for the live record so far
	red     history.StreamRedactor
	timer   *time.Timer
	stopped bool
}

func newLiveOutput(call eventlog.Event, push func(*eventlog.Event)) *liveOutput {
	call.Input, call.ToolStatus = nil, "in_progress"
	return &liveOutput{call: call, push: push}
}

// write takes output as the command prints it.
func (l *liveOutput) write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	room := liveTerminalOutput - l.taken
	if len(p) > room {
		cut := room
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		l.pending = append(l.pending, p[:cut]...)
		l.pending = append(l.pending, liveCutNote...)
		l.flushLocked(true)
		l.stopped = true
		return
	}
	l.taken += len(p)
	l.pending = append(l.pending, p...)
	if l.timer == nil {
		l.timer = time.AfterFunc(liveTerminalEvery, l.tick)
	}
}

func (l *liveOutput) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if !l.stopped {
		l.flushLocked(false)
	}
}

// end records what is left once the command has exited, before its result.
func (l *liveOutput) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if !l.stopped {
		l.flushLocked(true)
		l.stopped = true
	}
}

// flushLocked records the pending output; last releases what the redactor
// holds back too.
func (l *liveOutput) flushLocked(last bool) {
	if len(l.pending) == 0 && !last {
		return
	}
	evs := []*eventlog.Event{{Type: eventlog.EventAgentMessage, Content: string(l.pending)}}
	l.pending = nil
	if last {
		evs = append(evs, &eventlog.Event{}) // any other event releases the held text
	}
	for _, e := range l.red.Events(evs) {
		if e.Type != eventlog.EventAgentMessage || e.Content == "" {
			continue
		}
		ev := l.call
		ev.Content = e.Content
		l.push(&ev)
	}
}
