package state

import "github.com/kandev/kandev/eventlog"

// costEpsilon absorbs float noise when a total is compared with a cap.
const costEpsilon = 1e-9

// UsageTotals are a session's usage as its log says, kept in the record
// (status and list show them): the context window as last reported, the
// money spent and the tokens counted over the whole session.
type UsageTotals struct {
	Used           int64            `json:"used"`           // tokens in the agent's context, last reported
	Size           int64            `json:"size"`           // the agent's context window, last reported
	Cost           *eventlog.Cost   `json:"cost,omitempty"` // spent over the whole session
	Tokens         *eventlog.Tokens `json:"tokens,omitempty"`
	TurnsWithUsage int              `json:"turns_with_usage"`
}

// UsageCount is the bookkeeping behind UsageTotals.Cost. Agents report the
// cost of their own session, cumulative; a kandev session can go through
// several agent sessions (fresh starts after a failed restore) and an
// agent may count again from zero after a restart. Closed is what earlier
// counts came to; Token and Amount are the count running now.
type UsageCount struct {
	Closed   float64 `json:"closed"`
	Token    string  `json:"token"`  // the agent session (resume token) the count belongs to
	Amount   float64 `json:"amount"` // the agent's latest cumulative figure
	LastTurn string  `json:"last_turn,omitempty"`
}

// AccountUsage adds usage event e, reported under agent session token, to
// the record's totals, and sets e.SessionCost to the session's total after
// it. A cost figure below the count's last one, or under another agent
// session, starts a new count: the agent counted again from zero. The total
// is the closed counts plus the running count's latest figure, so within one
// count the total equals what the agent reports.
func (s *Session) AccountUsage(e *eventlog.Event, token string) {
	u := s.Usage
	if u == nil {
		u = &UsageTotals{}
		s.Usage = u
	}
	if s.UsageCount == nil {
		s.UsageCount = &UsageCount{}
	}
	c := s.UsageCount
	if e.Used != nil {
		u.Used = *e.Used
	}
	if e.Size != nil {
		u.Size = *e.Size
	}
	if e.Tokens != nil {
		t := e.Tokens.Add(eventlog.Tokens{})
		if u.Tokens != nil {
			t = u.Tokens.Add(*e.Tokens)
		}
		u.Tokens = &t
	}
	if e.Cost != nil {
		if c.Token != token || e.Cost.Amount < c.Amount-costEpsilon {
			c.Closed += c.Amount
			c.Token = token
		}
		c.Amount = e.Cost.Amount
		u.Cost = &eventlog.Cost{Amount: c.Closed + c.Amount, Currency: e.Cost.Currency}
	}
	if u.Cost != nil {
		total := *u.Cost
		e.SessionCost = &total
	}
	if e.TurnID != "" && e.TurnID != c.LastTurn {
		c.LastTurn = e.TurnID
		u.TurnsWithUsage++
	}
}
