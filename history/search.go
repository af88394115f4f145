package history

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/parallel"
	"github.com/kandev/kandev/state"
)

// SearchOptions says what to look for and in which sessions.
type SearchOptions struct {
	Query string
	// Regex reads Query as a regular expression (RE2 syntax, case-sensitive
	// unless it says (?i)); otherwise Query is a literal matched ignoring
	// the case of ASCII letters.
	Regex     bool
	Workspace string    // only sessions of this workspace
	Agent     string    // only sessions of this agent
	Since     time.Time // only sessions active at or after this instant
	Limit     int       // at most this many hits (0: all)
}

// SearchHit is one event whose text matches: a message (the streamed chunks
// of one assistant message or thought read as one text), a tool call's
// title or a tool result. Every text is redacted before it is matched.
type SearchHit struct {
	SessionID      string    `json:"session_id"`
	Seq            int64     `json:"seq"`
	Type           string    `json:"type"`
	Snippet        string    `json:"snippet"`
	Title          string    `json:"title"` // the session's
	LastActivityAt time.Time `json:"last_activity_at"`
	// Rewound is set for an event a rewind or clear took out of the current
	// conversation (the transcript shows it with --all-epochs).
	Rewound bool `json:"rewound,omitempty"`
	// Match is where the match is in Snippet.
	Match [2]int `json:"-"`
}

// SearchReport says what a search read and what it had to skip.
type SearchReport struct {
	Sessions     int // sessions searched
	SkippedLines int // lines that could hold a match but do not parse
	SkippedLogs  int // logs that could not be read
}

// Search finds opts.Query in the logs of every session that passes the
// filters, newest session first and, within a session, newest event first.
// There is no index: the logs are read directly, several at once, each by a
// literal scan of its raw bytes that decodes only the lines that may match.
func Search(h *state.Home, opts SearchOptions) ([]SearchHit, SearchReport, error) {
	var rep SearchReport
	m, err := newMatcher(opts)
	if err != nil {
		return nil, rep, err
	}
	all, err := h.ListSessions()
	if err != nil {
		return nil, rep, err
	}
	all = slices.DeleteFunc(all, func(s *state.Session) bool {
		return opts.Workspace != "" && s.Workspace != opts.Workspace ||
			opts.Agent != "" && s.Agent != opts.Agent ||
			!opts.Since.IsZero() && s.LastActivityAt.Before(opts.Since)
	})
	rep.Sessions = len(all)
	// Newest sessions first, a batch at a time, so that a limit stops the
	// reading once the batches read so far fill it. A batch is large enough
	// for parallel.ForEach to spread it over every core.
	batch := len(all)
	if opts.Limit > 0 {
		batch = 64 * min(runtime.GOMAXPROCS(0), 8)
	}
	var out []SearchHit
	for lo := 0; lo < len(all) && (opts.Limit == 0 || len(out) < opts.Limit); lo += batch {
		part := all[lo:min(lo+batch, len(all))]
		found := make([]logScan, len(part))
		parallel.ForEach(len(part), func(i int) { found[i] = scanSession(h, part[i], m, opts.Limit) })
		for _, f := range found {
			rep.SkippedLines += f.skipped
			if f.err != nil {
				rep.SkippedLogs++
			}
			out = append(out, f.hits...)
		}
	}
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, rep, nil
}

func newMatcher(opts SearchOptions) (matcher, error) {
	if opts.Query == "" {
		return nil, fmt.Errorf("%w: the query is empty", ErrBadQuery)
	}
	if !opts.Regex {
		return newLiteral(opts.Query), nil
	}
	re, err := regexp.Compile(opts.Query)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadQuery, err)
	}
	return pattern{re}, nil
}

// ErrBadQuery is an empty query or a regular expression that does not compile.
var ErrBadQuery = errors.New("bad search query")

// blockBufs are the read buffers of the scans running at once.
var blockBufs = sync.Pool{New: func() any { return new([]byte) }}

// scanSession searches one session's log; its hits are newest first, at
// most limit of them (0: all).
func scanSession(h *state.Home, s *state.Session, m matcher, limit int) logScan {
	f := logScan{m: m, session: s}
	buf := blockBufs.Get().(*[]byte)
	defer blockBufs.Put(buf)
	path := h.LogPath(s.ID)
	rewound := s.Epoch > 0 || s.RewindPending != nil
	*buf, _, f.err = eventlog.ReadLogBlocks(path, *buf, func(b []byte) bool {
		if rewound {
			f.findRewinds(b)
		}
		m.scan(b, f.line)
		return true
	})
	if errors.Is(f.err, state.ErrNotFound) { // no event yet
		f.err = nil
	}
	if f.err == nil && len(f.turns) > 0 {
		*buf, _, f.err = eventlog.ReadLogBlocks(path, *buf, func(b []byte) bool {
			f.assemble(b)
			return true
		})
		f.flush()
	}
	f.markRewound()
	slices.SortStableFunc(f.hits, func(a, b SearchHit) int { return int(b.Seq - a.Seq) })
	if limit > 0 && len(f.hits) > limit { // a whole batch is read: keep only what can be shown
		f.hits = slices.Clone(f.hits[:limit])
	}
	return f
}
