package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/subagents"
)

// recapCmd is kandev recap.
type recapCmd struct {
	SessionRef
	Limit     int  `help:"Recent messages to show, 1 to 100." default:"20" placeholder:"N"`
	AllEpochs bool `help:"Also count and show what a rewind or clear took back."`
}

// Help shows an example.
func (c *recapCmd) Help() string {
	return "A bounded snapshot to get back into a session: its state, the newest markers and messages,\n" +
		"unresolved markers and queued prompts. The same stored events give the same recap.\n\n" +
		"Example:\n  kandev recap --latest\n  kandev recap 20261130 --limit 5 --json"
}

func (c *recapCmd) readsOnly() bool { return true }

// Run prints the recap.
func (c *recapCmd) Run(env *Env) error {
	if c.Limit < 1 || c.Limit > history.MaxRecapLimit {
		return usagef("--limit must be between 1 and %d (got %d)", history.MaxRecapLimit, c.Limit)
	}
	h, s, err := c.load(env, needAny)
	if err != nil {
		return err
	}
	p, err := newProbe(env, "", false)
	if err != nil {
		return err
	}
	st := p.observe(s)
	r, rep, err := readRecap(h, s, st.Badge, c.Limit, c.AllEpochs, env.Now())
	if err != nil {
		return err
	}
	warnSkipped(env, h, s.ID, rep)
	if kids := sessionChildren(h, s); len(kids) > 0 { // children.go
		r.Children = subagents.Counts(kids)
	}
	env.Out.Object(recapOutput{Recap: r}, func(w io.Writer) { writeRecapText(w, r, st.Next) })
	return nil
}

// readRecap reads what the recap shows from the end of the log: the window
// of the newest messages, then, counted but not kept, the turns back to
// where the cached digest of the log ends (or to the log's start when there
// is no digest, or it does not match the log). It then caches the digest up
// to the newest turn, so the next recap reads only what came since, and
// costs about the same on a log of a thousand events or a million.
//
// Unless allEpochs, what a rewind took back is neither shown nor counted; a
// digest made before a rewind counts it, so meeting a rewind drops the
// digest. allEpochs reads the whole log and leaves the cache alone.
func readRecap(h *state.Home, s *state.Session, badge string, limit int, allEpochs bool, now time.Time) (history.Recap, eventlog.ReadReport, error) {
	var before history.Digest
	if !allEpochs {
		before = loadDigest(h, s.ID)
	}
	fence := history.NewFence()
	floor, floorSeen := before.Through, false
	window := history.NewTailWindow(0, limit, false)
	var skipped history.Span
	var stretch []eventlog.Event // newest first: the turn being counted after the window
	checks := map[int64]string{} // turn_started seq -> check of its line, within the window
	rep, err := eventlog.ScanEventsBackward(h.LogPath(s.ID), func(e eventlog.Event, line []byte) bool {
		if !allEpochs && !fence.Visible(e) {
			return true
		}
		if e.Type == eventlog.EventRewind && !allEpochs {
			before, floor = history.Digest{}, 0
		}
		if floor > 0 && !floorSeen && e.Seq <= floor {
			if e.Seq == floor && e.Type == eventlog.EventTurnStarted && lineCheck(line) == before.Check {
				floorSeen = true
			} else { // the log is not the one the digest was made of
				before, floor = history.Digest{}, 0
			}
		}
		history.RedactEvent(&e)
		if !window.Done() {
			if e.Type == eventlog.EventTurnStarted {
				checks[e.Seq] = lineCheck(line)
			}
			if window.Add(e) {
				return true
			}
			return !(floorSeen && e.Seq <= floor)
		}
		stretch = append(stretch, e)
		if e.Type == eventlog.EventTurnStarted {
			skipped.AddOlder(oldestFirst(stretch))
			stretch = stretch[:0]
			if floorSeen && e.Seq == floor {
				return false
			}
		}
		return true
	})
	if err != nil && !isNotFound(err) {
		return history.Recap{}, rep, err
	}
	if len(stretch) > 0 { // the first turn of the log, or events before any turn
		skipped.AddOlder(oldestFirst(stretch))
	}
	unserved, err := h.ReadInbox(s.ID, s.InboxOffset)
	if err != nil {
		return history.Recap{}, rep, err
	}
	r, next, ok := history.BuildRecap(history.RecapInput{
		Session: *s, Badge: badge, Limit: limit,
		Before: before, Skipped: skipped, Window: window.Events(),
		Unserved: unserved, InboxServed: s.InboxServed, GeneratedAt: now,
	})
	if ok && !allEpochs && (next.Through != before.Through || !floorSeen) {
		next.Check = checks[next.Through]
		if b, err := json.Marshal(next); err == nil {
			_ = safefile.WriteFileAtomic(h.DigestPath(s.ID), append(b, '\n')) // a cache: a read-only home only makes the next recap slower
		}
	}
	return r, rep, nil
}

// loadDigest reads the cached digest; a missing, unreadable or foreign one
// is the zero digest (read the whole log).
func loadDigest(h *state.Home, id string) history.Digest {
	b, err := h.ReadDigest(id) // never through a link
	if err != nil {
		return history.Digest{}
	}
	var d history.Digest
	if json.Unmarshal(b, &d) != nil || d.Version != history.DigestVersion || d.Through <= 0 || d.Check == "" {
		return history.Digest{}
	}
	return d
}

// lineCheck identifies a stored line (its timestamp and session id make it unique).
func lineCheck(line []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(line))
	return hex.EncodeToString(sum[:16])
}

func oldestFirst(evs []eventlog.Event) []eventlog.Event {
	out := slices.Clone(evs)
	slices.Reverse(out)
	return out
}

// writeRecapText is the recap for a terminal: the session line, what needs
// attention, the newest messages, the queue and the command to run next.
func writeRecapText(w io.Writer, r history.Recap, next string) {
	s := r.Session
	fmt.Fprintf(w, "session   %s  [%s]  %s\n", s.ID, s.Badge, printableLine(s.Title))
	fmt.Fprintf(w, "state     %s (task %s)", s.State, s.TaskState)
	if s.StopReason != "" {
		fmt.Fprintf(w, ", last turn: %s", s.StopReason)
	}
	fmt.Fprintf(w, "; agent %s, workspace %s\n", s.Agent, s.Workspace)
	if s.Setup != nil {
		fmt.Fprintf(w, "setup     %s\n", printableLine(setup.Describe(s.Setup)))
	}
	if s.ErrorMessage != "" {
		fmt.Fprintf(w, "error     %s\n", firstLine(s.ErrorMessage))
	}
	for i, m := range r.PendingMarkers {
		label := "pending"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "%-9s %s\n", label, markerLine(m))
	}
	for i, m := range r.RecentMarkers {
		label := "markers"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "%-9s %s\n", label, markerLine(m))
	}
	if len(r.Children) > 0 {
		fmt.Fprintf(w, "children  %s\n", countsLine(r.Children)) // children.go
	}
	shown := len(r.RecentMessages)
	fmt.Fprintf(w, "messages  last %d of %d", shown, shown+r.OmittedMessages)
	if r.OmittedMessages > 0 && shown > 0 {
		fmt.Fprintf(w, " (older: kandev transcript %s --before %d)", s.ID, r.RecentMessages[0].StartSequence)
	}
	fmt.Fprintln(w)
	if shown > 0 {
		fmt.Fprintln(w)
		io.WriteString(w, history.RenderText(r.RecentMessages))
		fmt.Fprintln(w)
	}
	if n := len(r.PendingInputs); n > 0 {
		fmt.Fprintf(w, "queued    %d prompt(s), next: %q\n", n, history.Clip(strings.TrimSpace(firstLine(r.PendingInputs[0].Text)), 60))
	}
	snap := r.Snapshot
	fmt.Fprintf(w, "snapshot  event %d, transcript %d, queue generation %d\n", snap.EventCursor, snap.TranscriptCursor, snap.QueueGeneration)
	if next != "" {
		fmt.Fprintf(w, "next      %s\n", next)
	}
}

// markerLine is one marker on one line: "#seq severity kind: summary".
func markerLine(m eventlog.Event) string {
	return fmt.Sprintf("#%d %s %s: %s", m.Seq, m.Severity, m.Kind, history.Clip(strings.TrimSpace(firstLine(m.Summary)), 120))
}
