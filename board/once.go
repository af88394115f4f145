package board

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/lipgloss"
)

// WriteText prints the board once as text: each column as a heading and a
// line per card (kandev board --once). Done is folded as on the screen
// unless allDone; colour only through r (none when it has no colour).
func WriteText(w io.Writer, cards []Card, f Filter, allDone bool, r *lipgloss.Renderer, now time.Time) error {
	st := newStyles(r)
	a := Arrange(cards, f, allDone)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(cards) == 0 {
		fmt.Fprintln(tw, `no sessions (start one with: kandev start "...")`)
	}
	for _, col := range Columns {
		n := len(a.Cols[col])
		if col == Done {
			n = a.DoneTotal
		}
		fmt.Fprintf(tw, "%s\n", st.heads[col].Render(fmt.Sprintf("%s (%d)", col.Title(), n)))
		if n == 0 {
			fmt.Fprintln(tw, "  -")
		}
		for i := range a.Cols[col] {
			c := &a.Cols[col][i]
			cost := c.Cost
			if cost == "" {
				cost = "-"
			}
			title := c.Title
			if c.Problem != "" {
				title = c.Problem // what kandev doctor would say of it
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, oneCell(c.Status(now)), dash(c.Agent), dash(c.Project),
				Age(now, c.Activity), cost, oneCell(title))
		}
		if col == Done && a.Collapsed() > 0 {
			fmt.Fprintf(tw, "  … and %d more (kandev board --once --all-done shows them)\n", a.Collapsed())
		}
	}
	return tw.Flush()
}

// JSONColumn is a column in kandev board --once --json.
type JSONColumn struct {
	Column   string `json:"column"`
	Title    string `json:"title"`
	Sessions []Card `json:"sessions"`
}

// JSON is the whole board for --json: every column with every card,
// nothing folded (a script counts what it needs).
func JSON(cards []Card, f Filter) map[string][]JSONColumn {
	a := Arrange(cards, f, true)
	out := make([]JSONColumn, 0, numColumns)
	for _, col := range Columns {
		cs := a.Cols[col]
		if cs == nil {
			cs = []Card{}
		}
		out = append(out, JSONColumn{Column: col.Key(), Title: col.Title(), Sessions: cs})
	}
	return map[string][]JSONColumn{"columns": out}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneCell keeps a tab out of a tabwriter cell.
func oneCell(s string) string { return strings.ReplaceAll(dash(s), "\t", " ") }
