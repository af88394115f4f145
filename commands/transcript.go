package commands

import (
	"fmt"
	"io"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// TranscriptCmd is kandev transcript.
type TranscriptCmd struct {
	SessionRef
	Before int64 `help:"Only entries that start before this seq (a page's next_before_sequence)." placeholder:"SEQ"`
	Limit  int   `help:"Entries per page, 1 to 1000." default:"200" placeholder:"N"`
}

// Help shows an example.
func (c *TranscriptCmd) Help() string {
	return "Pages go backwards from the newest entry; pass a page's next_before_sequence as --before for the one before it.\n\n" +
		"Example:\n  kandev transcript --latest --limit 20\n  kandev transcript 20261130 --before 812 --json"
}

// TranscriptPage is one page of the assembled conversation (SPEC 5).
type TranscriptPage struct {
	Entries            []history.Entry `json:"entries"`
	HasOlder           bool            `json:"has_older"`
	NextBeforeSequence int64           `json:"next_before_sequence"`
	Limit              int             `json:"limit"`
}

// Run prints one page of the session's transcript.
func (c *TranscriptCmd) Run(env *Env) error {
	if c.Limit < 1 || c.Limit > history.MaxPageLimit {
		return usagef("--limit must be between 1 and %d (got %d)", history.MaxPageLimit, c.Limit)
	}
	if c.Before < 0 {
		return usagef("--before must be a seq (1 or more), or 0 for the newest page")
	}
	id, err := c.resolve(env, nil)
	if err != nil {
		return err
	}
	h, _ := env.Home()
	page, rep, err := readTranscriptPage(h.LogPath(id), c.Before, c.Limit)
	if err != nil {
		return err
	}
	if p := rep.Problems(); p != "" {
		fmt.Fprintln(env.Out.Err, "kandev: warning: "+p)
	}
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

// readTranscriptPage reads the page of entries that start before seq before
// (0: the newest page) from the end of the log at path, only as far back as
// the page needs (history.TailWindow says how far, and why that is exact).
// Events are redacted again as they are read, in case an older kandev or
// another tool wrote them.
func readTranscriptPage(path string, before int64, limit int) (TranscriptPage, state.ReadReport, error) {
	w := history.NewTailWindow(before, limit+1, true)
	rep, err := state.ScanEventsBackward(path, func(e state.Event, _ []byte) bool {
		history.RedactEvent(&e)
		return w.Add(e)
	})
	if err != nil && !isNotFound(err) {
		return TranscriptPage{}, rep, err
	}
	entries, hasOlder, next := w.TranscriptPage(limit)
	if entries == nil {
		entries = []history.Entry{}
	}
	return TranscriptPage{Entries: entries, HasOlder: hasOlder, NextBeforeSequence: next, Limit: limit}, rep, nil
}
