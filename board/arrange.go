package board

import (
	"slices"
	"strings"
)

// Filter narrows the board: Text matches a card's id, title, agent,
// project or badge (any case); Project keeps one project's cards.
type Filter struct {
	Text    string
	Project string
}

// Match reports whether c passes the filter.
func (f Filter) Match(c *Card) bool {
	if f.Project != "" && c.Project != f.Project {
		return false
	}
	if f.Text == "" {
		return true
	}
	t := strings.ToLower(f.Text)
	for _, s := range []string{c.ID, c.Title, c.Agent, c.Project, c.Badge, c.Parked} {
		if strings.Contains(strings.ToLower(s), t) {
			return true
		}
	}
	return false
}

// Arranged is the board's cards in columns, each newest activity first,
// with an unreadable card after the readable ones (its activity is
// unknown). Done holds at most DoneShown cards unless expanded; DoneTotal
// counts them all.
type Arranged struct {
	Cols      [numColumns][]Card
	DoneTotal int
}

// DoneCollapseAt is how many finished sessions the board shows before it
// folds the rest away: the sessions that need nothing are the many.
const DoneCollapseAt = 10

// Arrange puts the cards that pass f in their columns. With expanded
// false, Done keeps its newest DoneCollapseAt cards.
func Arrange(cards []Card, f Filter, expanded bool) Arranged {
	var a Arranged
	for i := range cards {
		if f.Match(&cards[i]) {
			col := cards[i].Column()
			a.Cols[col] = append(a.Cols[col], cards[i])
		}
	}
	for i := range a.Cols {
		slices.SortFunc(a.Cols[i], newestFirst)
	}
	a.DoneTotal = len(a.Cols[Done])
	if !expanded && a.DoneTotal > DoneCollapseAt {
		a.Cols[Done] = a.Cols[Done][:DoneCollapseAt]
	}
	return a
}

// Collapsed is how many Done cards are folded away.
func (a *Arranged) Collapsed() int { return a.DoneTotal - len(a.Cols[Done]) }

func newestFirst(x, y Card) int {
	if (x.Problem == "") != (y.Problem == "") {
		if x.Problem == "" {
			return -1
		}
		return 1
	}
	if c := y.Activity.Compare(x.Activity); c != 0 {
		return c
	}
	return strings.Compare(y.ID, x.ID)
}
