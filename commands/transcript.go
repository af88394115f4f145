package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// transcriptCmd is kandev transcript.
type transcriptCmd struct {
	SessionRef
	Before    int64  `help:"Only entries that start before this seq (a page's next_before_sequence)." placeholder:"SEQ"`
	Limit     int    `help:"Entries per page, 1 to 1000." default:"200" placeholder:"N"`
	AllEpochs bool   `help:"Also show what a rewind or clear took back (the log keeps everything)."`
	Child     string `help:"Show the stream of one subagent (its id, from kandev status) instead of the session's." placeholder:"CHILD"`
}

// Help shows an example.
func (c *transcriptCmd) Help() string {
	return "Pages go backwards from the newest entry; pass a page's next_before_sequence as --before for the one before it.\n\n" +
		"Example:\n  kandev transcript --latest --limit 20\n  kandev transcript 20261130 --before 812 --json"
}

// transcriptPage is one page of the assembled conversation (see docs/commands.md).
type transcriptPage struct {
	Entries            []history.Entry `json:"entries"`
	HasOlder           bool            `json:"has_older"`
	NextBeforeSequence int64           `json:"next_before_sequence"`
	Limit              int             `json:"limit"`
}

func (c *transcriptCmd) readsOnly() bool { return true }

// Run prints one page of the session's transcript.
func (c *transcriptCmd) Run(env *Env) error {
	if c.Limit < 1 || c.Limit > history.MaxPageLimit {
		return usagef("--limit must be between 1 and %d (got %d)", history.MaxPageLimit, c.Limit)
	}
	if c.Before < 0 {
		return usagef("--before must be a seq (1 or more), or 0 for the newest page")
	}
	id, err := c.resolve(env, needAny)
	if err != nil {
		return err
	}
	h, _ := env.Home()
	if c.Child != "" {
		return printChildTranscript(env, h.LogPath(id), id, c.Child, c.Limit) // children.go
	}
	page, rep, err := readTranscriptPage(h.LogPath(id), c.Before, c.Limit, c.AllEpochs)
	if err != nil {
		return err
	}
	warnSkipped(env, h, id, rep)
	env.Out.Object(page, func(w io.Writer) {
		if len(page.Entries) == 0 {
			fmt.Fprintln(w, "(no messages)")
		} else {
			io.WriteString(w, history.RenderText(page.Entries))
		}
	})
	if page.HasOlder && !env.Out.JSON {
		env.Out.Info("older entries: kandev transcript %s --before %d", id, page.NextBeforeSequence)
	}
	return nil
}

// warnSkipped reports a torn or corrupt line a reader skipped, but not the
// unterminated line of an append a live owner is making right now.
func warnSkipped(env *Env, h *state.Home, id string, rep eventlog.ReadReport) {
	if alive, _ := h.OwnerAlive(id); alive && len(rep.CorruptLines) == 0 {
		return
	}
	if p := rep.Problems(); p != "" {
		fmt.Fprintln(env.Out.Err, "kandev: warning: "+p)
	}
}

// readTranscriptPage reads the page of entries that start before seq before
// (0: the newest page) from the end of the log at path, only as far back as
// the page needs (history.TailWindow says how far, and why that is exact).
// Events are redacted again as they are read, in case an older kandev or
// another tool wrote them.
//
// An older page still reads the lines after it. The window keeps of those
// only the ones after the last turn_started, so they are kept here as raw
// lines and decoded only once the page is reached: skipping costs a scan for
// newlines, not a JSON decode per line. Unless allEpochs, what a rewind took
// back is left out.
func readTranscriptPage(path string, before int64, limit int, allEpochs bool) (transcriptPage, eventlog.ReadReport, error) {
	w := history.NewTailWindow(before, limit+1, true)
	fence := newLineFence(allEpochs)
	var bad eventlog.CorruptTracker // lines the page would have shown, were they readable
	feed := func(off int64, line []byte) bool {
		var e eventlog.Event
		if json.Unmarshal(line, &e) != nil || !eventlog.ValidSeq(e.Seq) {
			bad.Line(off, line)
			return true
		}
		bad.Event(e.Seq)
		history.RedactEvent(&e)
		return w.Add(e)
	}
	type rawLine struct {
		off  int64
		line []byte
	}
	var newer []rawLine // raw lines at or after before, newest first, since the last turn_started
	skipping := before > 0
	rep, err := eventlog.ScanBackward(path, func(off int64, line []byte) bool {
		if !fence.keep(line) {
			return true
		}
		if skipping {
			seq, ok := lineSeq(line)
			if !ok {
				return true // not readable: where it lies is not known, so a newer page reports it
			}
			if seq >= before {
				if isTurnStart(line) {
					newer = newer[:0]
				} else {
					newer = append(newer, rawLine{off, bytes.Clone(line)})
				}
				return true
			}
			for _, l := range newer {
				if !feed(l.off, l.line) {
					return false
				}
			}
			skipping, newer = false, nil // every line from here on is older than the page's end
		}
		return feed(off, line)
	})
	bad.AddTo(&rep)
	if err != nil && !isNotFound(err) {
		return transcriptPage{}, rep, err
	}
	entries, hasOlder, next := w.TranscriptPage(limit)
	if entries == nil {
		entries = []history.Entry{}
	}
	return transcriptPage{Entries: entries, HasOlder: hasOlder, NextBeforeSequence: next, Limit: limit}, rep, nil
}

// lineSeq reads the seq of a log line from its start ({"seq":N,...), as
// kandev writes it; other lines are decoded.
func lineSeq(line []byte) (int64, bool) {
	const prefix = `{"seq":`
	if rest, ok := bytes.CutPrefix(line, []byte(prefix)); ok {
		var n int64
		i := 0
		for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
			n = n*10 + int64(rest[i]-'0')
		}
		if i > 0 && i <= 16 && i < len(rest) && rest[i] == ',' && eventlog.ValidSeq(n) {
			return n, true
		}
	}
	var e struct {
		Seq int64 `json:"seq"`
	}
	if json.Unmarshal(line, &e) != nil || !eventlog.ValidSeq(e.Seq) {
		return 0, false
	}
	return e.Seq, true
}

// isTurnStart reports whether a log line is a turn_started event.
func isTurnStart(line []byte) bool {
	if !bytes.Contains(line, []byte(`"turn_started"`)) {
		return false
	}
	var e struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(line, &e) == nil && e.Type == eventlog.EventTurnStarted
}

// lineFence is history.Fence over raw log lines read newest first; nil
// keeps every line (all epochs).
type lineFence struct{ f *history.Fence }

func newLineFence(allEpochs bool) *lineFence {
	if allEpochs {
		return nil
	}
	return &lineFence{history.NewFence()}
}

// keep reports whether line is in the current epoch; only rewind lines are
// decoded.
func (l *lineFence) keep(line []byte) bool {
	if l == nil {
		return true
	}
	seq, ok := lineSeq(line)
	if !ok {
		return true
	}
	if l.f.Hides(seq) {
		return false
	}
	if bytes.Contains(line, []byte(`"rewind"`)) {
		var e eventlog.Event
		if json.Unmarshal(line, &e) == nil && e.Type == eventlog.EventRewind {
			l.f.Visible(e)
		}
	}
	return true
}
