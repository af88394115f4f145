package board

import (
	"slices"

	tea "github.com/charmbracelet/bubbletea"
)

// arrange lays the cards out again, keeping the selected session selected
// while it stays in its column (else the same place in the column).
func (m *Model) arrange() {
	cards := make([]Card, 0, len(m.cards))
	for _, c := range m.cards {
		cards = append(cards, c)
	}
	m.a = Arrange(cards, m.filter, m.expanded)
	for col := range m.a.Cols {
		if i := slices.IndexFunc(m.a.Cols[col], func(c Card) bool { return c.ID == m.selID }); i >= 0 && col == m.col {
			m.row[col] = i
		}
		m.row[col] = max(0, min(m.row[col], len(m.a.Cols[col])-1))
	}
	m.remember()
}

// remember notes which session is selected.
func (m *Model) remember() {
	if c := m.selected(); c != nil {
		m.selID = c.ID
	}
}

// selected is the selected card, nil when its column is empty.
func (m *Model) selected() *Card {
	cs := m.a.Cols[m.col]
	if len(cs) == 0 {
		return nil
	}
	return &cs[m.row[m.col]]
}

func (m *Model) moveCol(d int) {
	m.col = (m.col + d + int(numColumns)) % int(numColumns)
	m.remember()
}

func (m *Model) moveRow(d int) {
	n := len(m.a.Cols[m.col])
	m.row[m.col] = max(0, min(m.row[m.col]+d, n-1))
	m.remember()
}

// mouse selects the card clicked; the wheel moves in the column.
func (m *Model) mouse(ev tea.MouseMsg) {
	switch {
	case ev.Button == tea.MouseButtonWheelUp:
		m.moveRow(-1)
	case ev.Button == tea.MouseButtonWheelDown:
		m.moveRow(1)
	case ev.Button == tea.MouseButtonLeft && ev.Action == tea.MouseActionPress:
		lay := m.layout()
		col := min(ev.X/lay.colW, int(numColumns)-1)
		if ev.Y < headerRows || ev.Y >= headerRows+lay.body {
			return
		}
		i := topOf(m.row[col], lay.visible) + (ev.Y-headerRows)/cardRows
		if i < len(m.a.Cols[col]) {
			m.col, m.row[col] = col, i
			m.remember()
		}
	}
}

// topOf is the first card shown of a column whose selected card is sel,
// when visible fit: the selected card is always on screen.
func topOf(sel, visible int) int {
	if visible <= 0 || sel < visible {
		return 0
	}
	return sel - visible + 1
}
