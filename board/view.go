package board

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// The smallest terminal the board draws in, and the rows its parts take.
const (
	MinWidth   = 80
	MinHeight  = 24
	headerRows = 1
	cardRows   = 5 // four lines and a gap
)

// NoSessions is what an empty board says.
const NoSessions = `no sessions yet: one started with kandev start "..." appears here`

// TooSmall is what the board says instead of itself on a smaller terminal.
func TooSmall(w, h int) string {
	return fmt.Sprintf("kandev board needs a terminal of at least %dx%d (this one is %dx%d)", MinWidth, MinHeight, w, h)
}

// styles are the board's looks, made by one renderer so that colour is
// decided once (a terminal, NO_COLOR, --no-color).
type styles struct {
	heads    [numColumns]lipgloss.Style
	title    lipgloss.Style
	dim      lipgloss.Style
	selected lipgloss.Style
	plain    lipgloss.Style
	status   lipgloss.Style
	help     help.Styles
}

// newStyles makes the styles with r.
func newStyles(r *lipgloss.Renderer) styles {
	colours := [numColumns]string{"1", "3", "5", "4", "8"}
	var st styles
	for i := range st.heads {
		st.heads[i] = r.NewStyle().Bold(true).Foreground(lipgloss.Color(colours[i]))
	}
	st.title = r.NewStyle().Bold(true)
	st.dim = r.NewStyle().Faint(true)
	st.selected = r.NewStyle().Border(lipgloss.ThickBorder(), false, false, false, true).BorderForeground(lipgloss.Color("6")).PaddingLeft(1)
	st.plain = r.NewStyle().Border(lipgloss.HiddenBorder(), false, false, false, true).PaddingLeft(1)
	st.status = r.NewStyle().Reverse(true)
	st.help = help.Styles{
		ShortKey: r.NewStyle().Bold(true), ShortDesc: r.NewStyle(), ShortSeparator: r.NewStyle().Faint(true),
		FullKey: r.NewStyle().Bold(true), FullDesc: r.NewStyle(), FullSeparator: r.NewStyle().Faint(true),
		Ellipsis: r.NewStyle().Faint(true),
	}
	return st
}

// layout is how the terminal's size divides among the parts.
type layout struct {
	colW    int // a column's width
	body    int // rows for cards under the headers
	visible int // cards a column shows at once
	helpH   int
}

func (m *Model) layout() layout {
	l := layout{colW: m.w / int(numColumns), helpH: 1}
	if m.help.ShowAll {
		l.helpH = lipgloss.Height(m.help.View(m.keys))
	}
	l.body = m.h - headerRows - 1 - l.helpH
	l.visible = max(1, (l.body-1)/cardRows) // one row left for "N more"
	return l
}

// View draws the board.
func (m *Model) View() string {
	if m.w == 0 {
		return "" // the size is not known yet
	}
	if m.w < MinWidth || m.h < MinHeight {
		return TooSmall(m.w, m.h)
	}
	lay := m.layout()
	now := m.now()
	cols := make([]string, numColumns)
	for i := range Columns {
		cols[i] = m.column(Column(i), lay, now)
	}
	board := lipgloss.JoinHorizontal(lipgloss.Top, cols...)
	return board + "\n" + m.statusLine() + "\n" + m.help.View(m.keys)
}

// column draws one column: its heading, the cards that fit around the
// selected one, and how many more there are.
func (m *Model) column(col Column, lay layout, now time.Time) string {
	cards := m.a.Cols[col]
	n := len(cards)
	if col == Done {
		n = m.a.DoneTotal
	}
	lines := []string{m.st.heads[col].Render(fit(fmt.Sprintf("%s %d", col.Title(), n), lay.colW-1))}
	top := topOf(m.row[col], lay.visible)
	end := min(len(cards), top+lay.visible)
	for i := top; i < end; i++ {
		lines = append(lines, m.card(&cards[i], col == Column(m.col) && i == m.row[col], lay.colW, now)...)
	}
	for len(lines) < headerRows+lay.body-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.st.dim.Render(fit(more(len(cards)-end, m.a.Collapsed(), col), lay.colW-1)))
	return lipgloss.NewStyle().Width(lay.colW).Render(strings.Join(lines, "\n"))
}

// more says what a column does not show: cards below, and finished
// sessions folded away.
func more(below, folded int, col Column) string {
	switch {
	case col == Done && folded > 0:
		return fmt.Sprintf("+%d more (z)", below+folded)
	case below > 0:
		return fmt.Sprintf("↓ %d more", below)
	}
	return ""
}

// card draws one card: title; agent and project; age, cost and children;
// what it needs or does. Then a gap.
func (m *Model) card(c *Card, sel bool, colW int, now time.Time) []string {
	w := colW - 3 // the border, the padding and a gap between columns
	title := c.Title
	if c.Problem != "" || title == "" {
		title = c.ID
	}
	meta := []string{Age(now, c.Activity)}
	if c.Cost != "" {
		meta = append(meta, c.Cost)
	}
	if c.Children > 0 {
		meta = append(meta, fmt.Sprintf("%d children", c.Children))
	}
	what := c.Status(now)
	if c.Badge == "running" && c.Last != "" {
		what = c.Last
	}
	body := []string{
		m.st.title.Render(fit(title, w)),
		fit(join(c.Agent, c.Project), w),
		m.st.dim.Render(fit(strings.Join(meta, " · "), w)),
		fit(what, w),
	}
	box := m.st.plain
	if sel {
		box = m.st.selected
	}
	return append(strings.Split(box.Render(strings.Join(body, "\n")), "\n"), "")
}

// statusLine is the selected session, the last action's outcome, or the
// line being typed.
func (m *Model) statusLine() string {
	if m.typing != "" {
		return m.input.View()
	}
	var parts []string
	if c := m.selected(); c != nil {
		parts = append(parts, c.ID+" "+c.Badge)
	}
	if len(m.cards) == 0 {
		parts = append(parts, NoSessions)
	}
	if m.filter.Project != "" {
		parts = append(parts, "project "+m.filter.Project)
	}
	if m.filter.Text != "" {
		parts = append(parts, "filter "+fmt.Sprintf("%q", m.filter.Text))
	}
	if m.newer > 0 {
		parts = append(parts, fmt.Sprintf("%d written by a newer kandev not shown", m.newer))
	}
	if m.msg != "" {
		parts = append(parts, m.msg)
	}
	return m.st.status.Render(fit(strings.Join(parts, " · "), m.w))
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " · " + b
}

// fit is s cut to w cells, padded so the line fills them.
func fit(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}
