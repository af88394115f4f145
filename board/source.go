package board

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/parallel"
	"github.com/kandev/kandev/state"
)

// Source reads a home's sessions into cards. Assess is the badge and
// warm-until as kandev list computes them (the board never decides a badge
// itself).
type Source struct {
	Home   *state.Home
	Assess func(s *state.Session) Facts
}

// Loaded is every card of the home, and what the listing left out.
type Loaded struct {
	Cards []Card
	// Newer counts records a newer kandev wrote (not shown, as in list).
	Newer int
}

// LoadAll reads every session of the home, as kandev list does.
func (src *Source) LoadAll() (Loaded, error) {
	all, skipped, err := src.Home.ListSessionsWhere(nil)
	if err != nil {
		return Loaded{}, err
	}
	cards := make([]Card, len(all), len(all)+len(skipped.Unreadable))
	parallel.ForEach(len(all), func(i int) { cards[i] = src.card(all[i]) })
	for _, r := range skipped.Unreadable {
		cards = append(cards, UnreadableCard(r.ID, r.Problem))
	}
	return Loaded{Cards: cards, Newer: skipped.Newer}, nil
}

// Reload reads one session again; gone is true when its record is no
// longer there. A record that does not load is an unreadable card.
func (src *Source) Reload(id string) (c Card, gone bool) {
	s, err := src.Home.LoadSession(id)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return Card{}, true
	case err != nil:
		c := UnreadableCard(id, err.Error())
		c.read = time.Now()
		return c, false
	}
	return src.card(s), false
}

func (src *Source) card(s *state.Session) Card {
	read := time.Now()
	c := NewCard(s, src.Assess(s))
	c.read = read
	if col := c.Column(); col == Running || col == NeedsYou {
		c.Last = lastWords(src.Home.LogPath(s.ID))
	}
	return c
}

// IDOf is the session a file of the sessions directory belongs to ("" for
// a file of none): every file of a session is named ID.something.
func IDOf(name string) string {
	id, _, _ := strings.Cut(name, ".")
	if state.ValidateID(id) != nil {
		return ""
	}
	return id
}

// lastWords is the newest event of the log a person would glance at, in
// one short line; "" when there is none. An agent's message streams in
// chunks: the newest chunks of it are joined.
func lastWords(path string) string {
	var msg []string
	var out string
	n, turn := 0, ""
	_, _ = eventlog.ScanEventsBackward(path, func(e eventlog.Event, _ []byte) bool {
		if e.Type == eventlog.EventAgentMessage && (n == 0 || e.TurnID == turn) && n < lastChars {
			msg = append(msg, e.Content)
			n, turn = n+len(e.Content), e.TurnID
			return true
		}
		if n > 0 {
			return false
		}
		out = summary(e)
		return out == "" // keep going back until one says something
	})
	if n > 0 {
		slices.Reverse(msg)
		return tail(oneLine(strings.Join(msg, "")), lastChars)
	}
	return out
}

// lastChars is as much of the newest words as a card shows.
const lastChars = 60

// summary is one line about e, "" for an event not worth a glance.
func summary(e eventlog.Event) string {
	switch e.Type {
	case eventlog.EventToolCall:
		return "tool: " + oneLine(e.ToolName)
	case eventlog.EventUserMessage:
		return "› " + tail(oneLine(e.Content), 58)
	case eventlog.EventPermissionRequest:
		return "asks: " + oneLine(e.ToolName)
	case eventlog.EventMarker:
		return oneLine(e.Summary)
	case eventlog.EventTurnEnded:
		return fmt.Sprintf("turn ended (%s)", e.StopReason)
	}
	return ""
}

// tail is the last n runes of s: the newest words of a message.
func tail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
