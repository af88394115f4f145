package state

// AgentSwitch is a move of a session from one agent to another (kandev
// switch), as the record keeps it until its event is in the log.
type AgentSwitch struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// BeginSwitch records in s the move to agent to: the old agent's session
// and what it advertised are dropped (the new agent starts a fresh session
// at the next turn, carrying the conversation so far as its resume
// context), and the event is pending until it is in the log. The setup is
// kept: the new agent's first start applies what it offers of it.
func (s *Session) BeginSwitch(to string) {
	s.SwitchPending = &AgentSwitch{From: s.Agent, To: to}
	s.Agent = to
	s.ResumeToken = ""
	s.Capabilities = nil
	s.PendingContext = true
	s.AgentNew = true
}
