package owner

import (
	"fmt"

	"github.com/kandev/kandev/acp"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// FinishPending finishes what a rewind or a switch left pending in s (a
// crash between its record and its log line), in that order, after
// counting any turn the log started that the record missed.
func FinishPending(h *state.Home, log *eventlog.EventLog, s *state.Session) error {
	catchUpTurns(h, s)
	if err := FinishRewind(h, log, s); err != nil {
		return err
	}
	return FinishSwitch(h, log, s)
}

// FinishSwitch appends the agent_switched event (and its marker) of the
// switch s holds as pending, unless the log already ends with it (a crash
// came after the append, before the record was cleared), and clears it.
// The record names the new agent before the event is written, so a crash
// between the two leaves the session on one agent or the other, never on
// none, and the event is written once. The caller owns the session and
// holds log open: an owner at its start, a switch, or a repair.
func FinishSwitch(h *state.Home, log *eventlog.EventLog, s *state.Session) error {
	sw := s.SwitchPending
	if sw == nil {
		return nil
	}
	if !switchLogged(h.LogPath(s.ID), *sw) {
		m := history.NewMarker(history.MarkerAgentSwitched, SwitchSummary(sw.From, sw.To), "")
		if err := log.AppendSync(&eventlog.Event{Type: eventlog.EventAgentSwitched, From: sw.From, To: sw.To}, &m); err != nil {
			return fmt.Errorf("switch %s: %w", s.ID, err)
		}
	}
	ns, err := h.UpdateSession(s.ID, func(s *state.Session) error { s.SwitchPending = nil; return nil })
	if err != nil {
		return err
	}
	*s = *ns
	return nil
}

// SwitchSummary is what the switch's marker says.
func SwitchSummary(from, to string) string {
	return fmt.Sprintf("Switched from agent %s to %s: the next turn starts %s with the conversation so far; the worktree is unchanged.", from, to, to)
}

// switchLogged reports whether the log already holds sw as its latest
// switch, reading back from the end only past what may follow it (its
// marker, a rewind's lines) to the first turn or message.
func switchLogged(path string, sw state.AgentSwitch) bool {
	found := false
	_, _ = eventlog.ScanEventsBackward(path, func(e eventlog.Event, _ []byte) bool {
		switch e.Type {
		case eventlog.EventAgentSwitched:
			found = e.From == sw.From && e.To == sw.To
			return false
		case eventlog.EventTurnStarted, eventlog.EventTurnEnded, eventlog.EventUserMessage, eventlog.EventAgentMessage, eventlog.EventAgentStarted:
			return false
		}
		return true
	})
	return found
}

// switchedMeanwhile is job for the agent record s names: kandev switch (here,
// or on another machine, brought by the claim) may have moved the session
// after the command read the record it took the profile from. A local
// agent's profile is looked up again; an agent in a container was set up
// for the old one, so the command is run again instead.
func switchedMeanwhile(job Job, s *state.Session) (Job, error) {
	if s.Agent == "" || job.Profile.Name == "" || s.Agent == job.Profile.Name {
		return job, nil
	}
	p, err := acp.LookupProfile(job.Config, s.Agent)
	if err != nil || job.Launch != nil {
		return job, fmt.Errorf("%w: session %s was switched to agent %s while this command started with %s; run it again", state.ErrOwnerBusy, s.ID, s.Agent, job.Profile.Name)
	}
	job.Profile = p
	return job, nil
}
