package board

import (
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// Facts are what kandev list and status compute about a session beyond
// its record: the badge, and when a live warm owner stops its agent.
type Facts struct {
	Badge     string
	WarmUntil *time.Time
}

// Card is what the board shows of one session.
type Card struct {
	ID        string     `json:"id"`
	Badge     string     `json:"badge"`
	Title     string     `json:"title"`
	Agent     string     `json:"agent"`
	Project   string     `json:"workspace"`
	Activity  time.Time  `json:"last_activity_at"`
	Cost      string     `json:"cost,omitempty"`
	WarmUntil *time.Time `json:"warm_until,omitempty"`
	// Parked is "permission" or "question" while one waits for a person,
	// with what it is about.
	Parked     string `json:"parked,omitempty"`
	ParkedWhat string `json:"parked_what,omitempty"`
	// LimitReset is when a usage limit the session waits on resets.
	LimitReset *time.Time `json:"limit_reset,omitempty"`
	Error      string     `json:"error,omitempty"`
	// Children counts the session's subagent sessions; nothing records them
	// yet, so it stays 0 and the card shows nothing.
	Children int `json:"children,omitempty"`
	// Last is the newest thing in the session's log worth a glance (read
	// for the cards a person watches: running, needing them).
	Last string `json:"last,omitempty"`
	// Problem: the record could not be read (the card is marked unreadable).
	Problem string `json:"problem,omitempty"`
	// read is when the card was read: of two reads of one session that
	// cross on their way to the board, the later one stays.
	read time.Time
}

// Column is where the card goes.
func (c *Card) Column() Column { return ColumnOf(c.Badge) }

// NewCard is the card of session s with the facts list computes.
func NewCard(s *state.Session, f Facts) Card {
	c := Card{ID: s.ID, Badge: f.Badge, Title: oneLine(s.Title), Agent: oneLine(s.Agent), Project: oneLine(s.Workspace),
		Activity: s.LastActivityAt, WarmUntil: f.WarmUntil, Error: oneLine(s.ErrorMessage)}
	if s.Usage != nil && s.Usage.Cost != nil {
		c.Cost = costText(s.Usage.Cost.Rounded())
	}
	if f.Badge == verdict.BadgeWaitingForPermission && len(s.ParkedRequests) > 0 {
		p := s.ParkedRequests[0]
		c.Parked, c.ParkedWhat = "permission", oneLine(p.ToolName)
		if p.Kind == state.ParkedQuestion {
			c.Parked = "question"
		}
	}
	if s.Limit != nil {
		c.LimitReset = s.Limit.ResetAt
	}
	return c
}

// UnreadableCard is the card of a record that does not load.
func UnreadableCard(id, problem string) Card {
	return Card{ID: id, Badge: verdict.BadgeUnknown, Problem: oneLine(problem)}
}

// Status is the card's one line about what the session needs or does.
func (c *Card) Status(now time.Time) string {
	switch {
	case c.Problem != "":
		return "unreadable record"
	case c.Parked != "" && c.ParkedWhat != "":
		return c.Parked + ": " + c.ParkedWhat
	case c.Parked != "":
		return c.Parked
	case c.Badge == verdict.BadgeWaitingForLimit && c.LimitReset != nil:
		return "limit resets " + clock(*c.LimitReset, now)
	case c.Badge == verdict.BadgeFailed && c.Error != "":
		return "failed: " + head(c.Error, 60)
	case c.WarmUntil != nil:
		return "warm until " + clock(*c.WarmUntil, now)
	}
	return c.Badge
}

// Age is how long ago the session was last active, in one short word.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return strconv.Itoa(max(0, int(d.Seconds()))) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// clock is a time of day, with the date when it is not today.
func clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// oneLine is s as one printable line: control characters (an escape
// sequence in a title) become spaces, so no record can drive the terminal.
func oneLine(s string) string {
	if s == "" {
		return s
	}
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return ' '
		}
		return r
	}, s)), " ")
}

// costText is a cost in few cells: dollars with their sign, others as
// kandev prints money.
func costText(c eventlog.Cost) string {
	if c.Currency == "USD" {
		return "$" + eventlog.Cost{Amount: c.Amount}.String()
	}
	return c.String()
}

// head is the first n runes of s.
func head(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
