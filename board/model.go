package board

import (
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/kandev/kandev/verdict"
)

// Model is the live board: the cards, what is selected, and what is typed.
type Model struct {
	live     *Live
	run      Runner
	now      func() time.Time
	cards    map[string]Card
	newer    int
	filter   Filter
	expanded bool
	a        Arranged
	col      int
	row      [numColumns]int // the selected card of each column
	selID    string          // the selected session, kept across changes
	w, h     int
	keys     keyMap
	help     help.Model
	input    textinput.Model
	typing   string // "filter" or "answer" while a line is typed
	pending  Action // the answer waiting for its text
	msg      string // the outcome of the last action, one line
	st       styles
}

// NewModel is a board over what lo holds, filtered by f (Done unfolded
// with allDone), kept live by live; actions run through run.
func NewModel(lo Loaded, f Filter, allDone bool, live *Live, run Runner, st styles, now func() time.Time) *Model {
	m := &Model{live: live, run: run, now: now, cards: make(map[string]Card, len(lo.Cards)), newer: lo.Newer,
		filter: f, expanded: allDone, keys: newKeyMap(), help: help.New(), input: textinput.New(), st: st}
	for _, c := range lo.Cards {
		m.cards[c.ID] = c
	}
	m.input.Cursor.SetMode(cursor.CursorStatic) // a blinking cursor would wake the board twice a second
	m.help.Styles = st.help
	m.arrange()
	return m
}

// Init starts the watch and the recheck.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.live.next(), recheckAfter(m.recheckEvery())) }

// Update applies one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.help.Width = msg.Width
	case tea.KeyMsg:
		if m.typing != "" {
			return m, m.typed(msg)
		}
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			// Keys typed faster than the board reads arrive as one message:
			// each is a key of its own.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
			}
			return m, tea.Batch(cmds...)
		}
		return m, m.key(msg)
	case tea.MouseMsg:
		m.mouse(msg)
	case cardsChanged:
		m.merge(msg)
		if msg.recheck {
			return m, recheckAfter(m.recheckEvery())
		}
		return m, m.live.next()
	case allLoaded:
		if msg.err == nil {
			m.cards = map[string]Card{}
			m.merge(cardsChanged{cards: msg.loaded.Cards})
			m.newer = msg.loaded.Newer
		}
		return m, m.live.next()
	case recheck:
		return m, m.recheck()
	case actionDone:
		m.msg = msg.line
	case transcriptReady:
		if msg.line != "" {
			m.msg = msg.line
			return m, nil
		}
		return m, m.run.pager(msg.act, msg.text)
	}
	return m, nil
}

// merge takes in sessions read again and arranges the board anew.
func (m *Model) merge(ch cardsChanged) {
	for _, c := range ch.cards {
		if old, ok := m.cards[c.ID]; ok && old.read.After(c.read) {
			continue // a recheck and a change crossed: the later read stays
		}
		m.cards[c.ID] = c
	}
	for _, id := range ch.gone {
		delete(m.cards, id)
	}
	m.arrange()
}

// recheck reads again the sessions whose badge rests on a live owner.
func (m *Model) recheck() tea.Cmd {
	var ids []string
	for id, c := range m.cards {
		if ownerBound(&c) {
			ids = append(ids, id)
		}
	}
	return func() tea.Msg {
		ch := m.live.reread(ids)
		ch.recheck = true
		return ch
	}
}

// ownerBound: the card's badge holds only while an owner lives.
func ownerBound(c *Card) bool {
	return c.Badge == verdict.BadgeRunning || c.Badge == verdict.BadgeWaitingForPermission || c.WarmUntil != nil
}

func (m *Model) recheckEvery() time.Duration {
	for _, c := range m.cards {
		if ownerBound(&c) {
			return ownerEvery
		}
	}
	return ageEvery
}

// key handles a key while nothing is typed.
func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.Quit):
		return tea.Quit
	case key.Matches(k, m.keys.Left):
		m.moveCol(-1)
	case key.Matches(k, m.keys.Right):
		m.moveCol(1)
	case key.Matches(k, m.keys.Up):
		m.moveRow(-1)
	case key.Matches(k, m.keys.Down):
		m.moveRow(1)
	case key.Matches(k, m.keys.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(k, m.keys.Fold):
		m.expanded = !m.expanded
		m.arrange()
	case key.Matches(k, m.keys.Project):
		m.toggleProject()
	case key.Matches(k, m.keys.Filter):
		return m.startTyping("filter", "filter: ", m.filter.Text)
	default:
		for _, ak := range m.keys.actionKeys() {
			if key.Matches(k, ak.b) {
				return m.act(ak.name)
			}
		}
	}
	return nil
}

// act runs action name on the selected card.
func (m *Model) act(name string) tea.Cmd {
	a, why := ActionFor(name, m.selected())
	switch {
	case why != "":
		m.msg = why
		return nil
	case a.NeedsText:
		m.pending = a
		return m.startTyping("answer", "answer: ", "")
	case a.Pager:
		m.msg = "reading the transcript of " + a.Args[1] + "…"
		return m.run.transcript(a)
	case a.Foreground:
		return m.run.foreground(a)
	}
	m.msg = a.Name + " " + a.Args[1] + "…"
	return m.run.background(a)
}

func (m *Model) toggleProject() {
	if m.filter.Project != "" {
		m.filter.Project = ""
	} else if c := m.selected(); c != nil && c.Project != "" {
		m.filter.Project = c.Project
	}
	m.arrange()
}

func (m *Model) startTyping(what, prompt, value string) tea.Cmd {
	m.typing = what
	m.input.Prompt = prompt
	m.input.SetValue(value)
	m.input.CursorEnd()
	return m.input.Focus()
}

// typed handles a key while a line is typed: enter takes it, esc drops it;
// the filter applies as it is typed.
func (m *Model) typed(k tea.KeyMsg) tea.Cmd {
	switch k.Type {
	case tea.KeyEnter:
		what, v := m.typing, m.input.Value()
		m.typing = ""
		m.input.Blur()
		if what == "answer" && v != "" {
			a := m.pending
			a.Args = append(append([]string{}, a.Args...), v)
			m.msg = "answer " + a.Args[1] + "…"
			return m.run.background(a)
		}
		return nil
	case tea.KeyEsc, tea.KeyCtrlC:
		if m.typing == "filter" {
			m.filter.Text = ""
			m.arrange()
		}
		m.typing = ""
		m.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	if m.typing == "filter" {
		m.filter.Text = m.input.Value()
		m.arrange()
	}
	return cmd
}
