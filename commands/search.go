package commands

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kandev/kandev/history"
)

// searchCmd is kandev search.
type searchCmd struct {
	Query     string `arg:"" help:"What to find: a word or phrase (ASCII letters in any case), or with --regex a regular expression."`
	Workspace string `help:"Only sessions of this workspace." placeholder:"W"`
	Agent     string `help:"Only sessions of this agent." placeholder:"A"`
	Since     string `help:"Only sessions active within this long (e.g. 24h, 7d, 1d12h)." placeholder:"DUR"`
	Limit     int    `help:"At most N results (0 = all)." default:"20" placeholder:"N"`
	Regex     bool   `help:"QUERY is a regular expression (RE2 syntax; (?i) ignores case)."`
}

// Help shows an example.
func (c *searchCmd) Help() string {
	return "Searches messages, thoughts, tool titles and tool results of every session, newest first.\n" +
		"Exits 1 when nothing matches, like grep.\n\n" +
		"Example:\n  kandev search lexer --since 7d\n  kandev search --regex 'fix(ed)? the (lexer|parser)' --json"
}

func (c *searchCmd) readsOnly() bool { return true }

// Run searches and prints the hits.
func (c *searchCmd) Run(env *Env) error {
	if c.Limit < 0 {
		return usagef("--limit must be 0 or more")
	}
	opts := history.SearchOptions{Query: c.Query, Regex: c.Regex, Workspace: c.Workspace, Agent: c.Agent, Limit: c.Limit}
	if c.Since != "" {
		age, err := parseAge("--since", c.Since)
		if err != nil {
			return err
		}
		opts.Since = env.Now().Add(-age)
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	hits, rep, err := history.Search(h, opts)
	if errors.Is(err, history.ErrBadQuery) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if rep.SkippedLines > 0 || rep.SkippedLogs > 0 {
		env.Out.Warn(fmt.Sprintf("skipped %d corrupt line(s) and %d unreadable log(s); the search went on (kandev doctor checks each session)", rep.SkippedLines, rep.SkippedLogs))
	}
	if hits == nil {
		hits = []history.SearchHit{}
	}
	now := env.Now()
	env.Out.ObjectPainted(searchOutput{Results: hits}, func(w io.Writer) { writeSearchText(w, env.Out, hits, now) })
	if len(hits) == 0 {
		return reportedf("no match for %q in %d session(s)", c.Query, rep.Sessions)
	}
	return nil
}

// writeSearchText prints each hit as a header line (session, seq, type,
// session title), the snippet with the match marked on a terminal, and the
// command that shows it in context. Every stored string goes through
// printableLine here: the writer passes the match's colour through.
func writeSearchText(w io.Writer, o *Output, hits []history.SearchHit, now time.Time) {
	for i, hit := range hits {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  seq %d  %s  %s (%s)\n", o.bold(printableLine(hit.SessionID)), hit.Seq, printableLine(hit.Type), printableLine(hit.Title), ago(now, hit.LastActivityAt))
		s, m := hit.Snippet, hit.Match
		fmt.Fprintf(w, "  %s%s%s\n", printableLine(s[:m[0]]), o.mark(printableLine(s[m[0]:m[1]])), printableLine(s[m[1]:]))
		epochs := ""
		if hit.Rewound {
			epochs = " --all-epochs"
		}
		fmt.Fprintf(w, "  %s\n", o.dim(fmt.Sprintf("kandev transcript %s%s --before %d --limit 5", hit.SessionID, epochs, hit.Seq+1)))
	}
}
