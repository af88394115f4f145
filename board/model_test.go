package board

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// testModel is a board over cards, sized w x h, without colour.
func testModel(t *testing.T, w, h int, cards ...Card) *Model {
	t.Helper()
	home, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live := WatchHome(&Source{Home: home})
	t.Cleanup(live.Close)
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.Ascii)
	now := func() time.Time { return time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC) }
	m := NewModel(Loaded{Cards: cards}, Filter{}, false, live, Runner{}, newStyles(r), now)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func everyColumn() []Card {
	c := []Card{
		card("s-parked", verdict.BadgeWaitingForPermission, "web", 0),
		card("s-run", verdict.BadgeRunning, "web", time.Minute),
		card("s-crashed", verdict.BadgeNeedsResume, "api", 2*time.Minute),
		card("s-idle", verdict.BadgeIdle, "api", 3*time.Minute),
		card("s-done", verdict.BadgeDone, "api", time.Hour),
	}
	c[0].Parked, c[0].ParkedWhat = "permission", "Write out.txt"
	return c
}

func TestView_FitsTheTerminalAtEverySize(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 50}, {133, 41}} {
		m := testModel(t, size[0], size[1], everyColumn()...)
		v := m.View()
		lines := strings.Split(v, "\n")
		if len(lines) != size[1] {
			t.Errorf("%v: %d lines", size, len(lines))
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w > size[0] {
				t.Errorf("%v: line %d is %d wide: %q", size, i, w, l)
			}
		}
		for _, want := range []string{"Needs you 1", "Running 1", "Needs resume 1", "Warm / idle 1", "Done 1", "title of s-p", "q quit"} {
			if !strings.Contains(v, want) {
				t.Errorf("%v: no %q in\n%s", size, want, v)
			}
		}
	}
}

func TestView_ASmallerTerminalGetsOneLineSayingTheMinimum(t *testing.T) {
	m := testModel(t, 79, 24, everyColumn()...)
	if v := m.View(); v != TooSmall(79, 24) || strings.Contains(v, "\n") {
		t.Fatalf("view at 79x24: %q", v)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24}) // a resize redraws
	if !strings.Contains(m.View(), "Needs you 1") {
		t.Fatal("no board after growing to 80x24")
	}
}

func TestModel_KeysAndClicksSelect(t *testing.T) {
	m := testModel(t, 100, 30, everyColumn()...)
	if m.selected().ID != "s-parked" {
		t.Fatalf("first selected: %s", m.selected().ID)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("l")})
	m.Update(tea.KeyMsg{Type: tea.KeyRight})
	if m.selected().ID != "s-crashed" {
		t.Fatalf("after l, right: %s", m.selected().ID)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("hh")}) // two keys read at once
	if m.selected().ID != "s-parked" {
		t.Fatalf("after hh: %s", m.selected().ID)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRight})
	m.Update(tea.KeyMsg{Type: tea.KeyRight})
	// A click on the fourth column's first card.
	m.Update(tea.MouseMsg{X: 3*20 + 2, Y: headerRows + 1, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	if m.selected().ID != "s-idle" {
		t.Fatalf("after a click: %s", m.selected().ID)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if cmd != nil || !strings.Contains(m.msg, "no permission request") {
		t.Fatalf("y on an idle card: %q", m.msg)
	}
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("q does not quit")
	}
}

func TestModel_FilterAsTypedAndTheSelectionFollowsTheSession(t *testing.T) {
	m := testModel(t, 100, 30, everyColumn()...)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	for _, r := range "api" {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	v := m.View()
	if !strings.Contains(v, "Needs you 0") || !strings.Contains(v, "Warm / idle 1") || !strings.Contains(v, `filter "api"`) {
		t.Fatalf("filtered on api:\n%s", v)
	}
	// A session that moves to another column: the card follows live.
	moved := card("s-idle", verdict.BadgeRunning, "api", 0)
	m.merge(cardsChanged{cards: []Card{moved}, gone: []string{"s-done"}})
	if v := m.View(); !strings.Contains(v, "Running 1") || !strings.Contains(v, "Done 0") {
		t.Fatalf("after the change:\n%s", v)
	}
}

func TestModel_ProjectKeyKeepsTheSelectedCardsProject(t *testing.T) {
	m := testModel(t, 100, 30, everyColumn()...)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p")}) // s-parked is in web
	if v := m.View(); !strings.Contains(v, "Needs resume 0") || !strings.Contains(v, "project web") {
		t.Fatalf("p on a web card:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p")})
	if v := m.View(); !strings.Contains(v, "Needs resume 1") {
		t.Fatalf("p again shows every project:\n%s", v)
	}
}

func TestModel_AnswerTakesATypedLine(t *testing.T) {
	q := card("s-q", verdict.BadgeWaitingForPermission, "web", 0)
	q.Parked = "question"
	m := testModel(t, 100, 30, q)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")})
	if m.typing != "answer" || !strings.Contains(m.View(), "answer: ") {
		t.Fatalf("a on a question: typing %q", m.typing)
	}
	for _, r := range "blue" {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil || m.typing != "" || m.msg != "answer s-q…" {
		t.Fatalf("enter: cmd %v, typing %q, msg %q", cmd != nil, m.typing, m.msg)
	}
}

func TestView_AnEmptyBoardSaysHowSessionsGetThere(t *testing.T) {
	if v := testModel(t, 80, 24).View(); !strings.Contains(v, "no sessions yet") {
		t.Fatalf("empty board:\n%s", v)
	}
}
