package commands

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/parallel"
	"github.com/kandev/kandev/limits"
	"github.com/kandev/kandev/state"
)

// usageCmd is kandev usage.
type usageCmd struct {
	SessionRef
	All   bool   `help:"Every session (with --workspace: of that workspace)."`
	Since string `help:"Only usage reported within DUR before now (e.g. 90m, 24h, 7d)." placeholder:"DUR"`
	By    string `help:"One row per session, agent or day." enum:"session,agent,day" default:"session"`
}

// Help shows an example.
func (c *usageCmd) Help() string {
	return "Examples:\n  kandev usage --latest\n  kandev usage --all --since 7d --by day"
}

// usageRow is one group of a usage report, or its total.
type usageRow struct {
	Key            string           `json:"key,omitempty"` // session id, agent name or day (YYYY-MM-DD, local time)
	Agent          string           `json:"agent,omitempty"`
	Sessions       int              `json:"sessions"`
	TurnsWithUsage int              `json:"turns_with_usage"`
	Cost           *eventlog.Cost   `json:"cost,omitempty"`
	Tokens         *eventlog.Tokens `json:"tokens,omitempty"`
	Used           int64            `json:"used,omitempty"` // by session: the context window as last reported
	Size           int64            `json:"size,omitempty"`
	// Limit is the agent's usage window as last reported (by session).
	Limit *state.RateWindow `json:"limit,omitempty"`
	seen  map[string]bool
}

func (c *usageCmd) readsOnly() bool { return true }

// Run sums the usage of one session or of all of them.
func (c *usageCmd) Run(env *Env) error {
	if c.All && (c.ID != "" || c.Latest) {
		return usagef("give a session (an id or --latest) or --all, not both")
	}
	var since time.Time
	if c.Since != "" {
		d, err := parseAge("--since", c.Since)
		if err != nil {
			return err
		}
		since = env.Now().Add(-d)
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	var ids []string // nil: every session
	if c.All {
		defer readingEverySession()()
	} else {
		id, err := c.resolve(env, needAny)
		if err != nil {
			return err
		}
		ids = []string{id}
	}
	recs, skipped, err := h.UsageRecords(ids)
	if err != nil {
		return err
	}
	if skipped > 0 && c.All {
		env.Out.Warn(fmt.Sprintf("%d session record(s) left out: unreadable or written by a newer kandev (kandev list says which)", skipped))
	}
	rows, total, err := c.sum(h, recs, since)
	if err != nil {
		return err
	}
	report := usageReport{By: c.By, Groups: rows, Total: total}
	if !since.IsZero() {
		report.Since = eventlog.FormatTime(since)
	}
	env.Out.Object(usageOutput{Usage: report}, func(w io.Writer) { c.writeTable(w, rows, total) })
	return nil
}

// sum groups the records' usage. Without --since and --by day the
// records' totals answer; otherwise each usage event of the logs is read.
func (c *usageCmd) sum(h *state.Home, recs []state.UsageRecord, since time.Time) ([]*usageRow, usageRow, error) {
	if c.Workspace != "" && c.All {
		kept := recs[:0]
		for _, r := range recs {
			if r.Workspace == c.Workspace {
				kept = append(kept, r)
			}
		}
		recs = kept
	}
	groups := map[string]*usageRow{}
	var total usageRow
	total.seen = map[string]bool{}
	if since.IsZero() && c.By != "day" {
		for _, r := range recs {
			if r.Usage != nil {
				addTotals(c.group(groups, r, ""), r, r.Usage)
				addTotals(&total, r, r.Usage)
			}
		}
		return c.order(groups), *total.rounded(), nil
	}
	per := make([][]state.UsageEvent, len(recs))
	errs := make([]error, len(recs))
	parallel.ForEach(len(recs), func(i int) {
		if recs[i].Usage == nil {
			return // reported nothing: its log holds no usage event
		}
		errs[i] = h.ScanUsage(recs[i].ID, since, func(e state.UsageEvent) { per[i] = append(per[i], e) })
	})
	for i, r := range recs {
		if errs[i] != nil {
			return nil, total, errs[i]
		}
		var before *eventlog.Cost // the session's total before each event
		for _, e := range per[i] {
			spent := spentBy(e, before)
			if e.SessionCost != nil {
				before = e.SessionCost
			}
			if !since.IsZero() && e.Time.Before(since) {
				continue
			}
			day := e.Time.Local().Format(time.DateOnly)
			addEvent(c.group(groups, r, day), r, e, spent)
			addEvent(&total, r, e, spent)
		}
	}
	return c.order(groups), *total.rounded(), nil
}

// spentBy is what event e added to the session's cost, given the total before it.
func spentBy(e state.UsageEvent, before *eventlog.Cost) *eventlog.Cost {
	if e.SessionCost == nil {
		return nil
	}
	spent := *e.SessionCost
	if before != nil {
		spent.Amount -= before.Amount
	}
	return &spent
}

// group returns the row record r (or its event of day) belongs to.
func (c *usageCmd) group(groups map[string]*usageRow, r state.UsageRecord, day string) *usageRow {
	key := r.ID
	switch c.By {
	case "agent":
		key = r.Agent
	case "day":
		key = day
	}
	g := groups[key]
	if g == nil {
		g = &usageRow{Key: key, seen: map[string]bool{}}
		if c.By == "session" {
			g.Agent = r.Agent
			if r.Usage != nil {
				g.Used, g.Size = r.Usage.Used, r.Usage.Size
			}
			g.Limit = r.RateLimit
		}
		groups[key] = g
	}
	return g
}

// usageSummary is a usage event in one line, for kandev events.
func usageSummary(e eventlog.Event) string {
	var parts []string
	if e.Used != nil && e.Size != nil {
		parts = append(parts, fmt.Sprintf("context %d/%d", *e.Used, *e.Size))
	}
	if e.Tokens != nil {
		parts = append(parts, fmt.Sprintf("tokens in %d out %d", e.Tokens.Input, e.Tokens.Output))
	}
	if e.Cost != nil {
		parts = append(parts, "agent says "+e.Cost.String())
	}
	if e.SessionCost != nil {
		parts = append(parts, "session "+e.SessionCost.String())
	}
	return strings.Join(parts, ", ")
}

// rounded drops the float noise of summed costs.
func (r usageRow) rounded() *usageRow {
	if r.Cost != nil {
		c := r.Cost.Rounded()
		r.Cost = &c
	}
	return &r
}

func addTotals(g *usageRow, r state.UsageRecord, u *state.UsageTotals) {
	if !g.seen[r.ID] {
		g.seen[r.ID] = true
		g.Sessions++
	}
	g.TurnsWithUsage += u.TurnsWithUsage
	g.Cost = addCost(g.Cost, u.Cost)
	g.Tokens = addTokens(g.Tokens, u.Tokens)
}

func addEvent(g *usageRow, r state.UsageRecord, e state.UsageEvent, spent *eventlog.Cost) {
	if !g.seen[r.ID] {
		g.seen[r.ID] = true
		g.Sessions++
	}
	if turn := r.ID + "/" + e.Turn; e.Turn != "" && !g.seen[turn] {
		g.seen[turn] = true
		g.TurnsWithUsage++
	}
	g.Cost = addCost(g.Cost, spent)
	g.Tokens = addTokens(g.Tokens, e.Tokens)
}

// addCost sums two costs; sums of different currencies say "mixed".
func addCost(a, b *eventlog.Cost) *eventlog.Cost {
	switch {
	case b == nil:
		return a
	case a == nil:
		c := *b
		return &c
	}
	c := eventlog.Cost{Amount: a.Amount + b.Amount, Currency: a.Currency}
	if a.Currency != b.Currency {
		c.Currency = "mixed"
	}
	return &c
}

func addTokens(a, b *eventlog.Tokens) *eventlog.Tokens {
	switch {
	case b == nil:
		return a
	case a == nil:
		t := *b
		return &t
	}
	t := a.Add(*b)
	return &t
}

// order sorts the rows: days in order, sessions and agents by cost, highest first.
func (c *usageCmd) order(groups map[string]*usageRow) []*usageRow {
	rows := make([]*usageRow, 0, len(groups))
	for _, g := range groups {
		rows = append(rows, g)
	}
	amount := func(r *usageRow) float64 {
		if r.Cost == nil {
			return 0
		}
		return r.Cost.Amount
	}
	for i, r := range rows {
		rows[i] = r.rounded()
	}
	sort.Slice(rows, func(i, j int) bool {
		if c.By != "day" && amount(rows[i]) != amount(rows[j]) {
			return amount(rows[i]) > amount(rows[j])
		}
		return rows[i].Key < rows[j].Key
	})
	return rows
}

// writeTable prints one line per group and the total.
func (c *usageCmd) writeTable(w io.Writer, rows []*usageRow, total usageRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no usage reported (agents report it as they run turns)")
		return
	}
	var t table
	head := map[string][]string{"session": {"SESSION", "AGENT", "CONTEXT"}, "agent": {"AGENT", "SESSIONS"}, "day": {"DAY", "SESSIONS"}}[c.By]
	t.add(append(head, "TURNS", "TOKENS IN", "TOKENS OUT", "COST")...)
	for _, r := range rows {
		first := []string{printableLine(r.Key), strconv.Itoa(r.Sessions)}
		if c.By == "session" {
			first = []string{r.Key, printableLine(r.Agent), fmt.Sprintf("%d/%d", r.Used, r.Size)}
		}
		t.add(append(first, rowFigures(r)...)...)
	}
	lead := []string{"TOTAL", strconv.Itoa(total.Sessions)}
	if c.By == "session" {
		lead = []string{"TOTAL", fmt.Sprintf("%d session(s)", total.Sessions), ""}
	}
	t.add(append(lead, rowFigures(&total)...)...)
	t.write(w)
	for _, r := range rows {
		if r.Limit != nil {
			fmt.Fprintf(w, "%s window: %s\n", r.Key, printableLine(limits.Describe(r.Limit)))
		}
	}
}

func rowFigures(r *usageRow) []string {
	in, out, cost := "-", "-", "-"
	if r.Tokens != nil {
		in, out = strconv.FormatInt(r.Tokens.Input, 10), strconv.FormatInt(r.Tokens.Output, 10)
	}
	if r.Cost != nil {
		cost = r.Cost.String()
	}
	return []string{strconv.Itoa(r.TurnsWithUsage), in, out, cost}
}
