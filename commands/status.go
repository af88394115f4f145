package commands

import (
	"fmt"
	"io"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// StatusCmd is kandev status.
type StatusCmd struct {
	SessionRef
}

// Help shows an example.
func (c *StatusCmd) Help() string { return "Example:\n  kandev status --latest" }

// Status is the status object of SPEC section 2.
type Status struct {
	NeedsResume     bool   `json:"needs_resume"`
	IsResumable     bool   `json:"is_resumable"`
	Reason          string `json:"reason"`
	Badge           string `json:"badge"`
	Attachable      bool   `json:"attachable"`
	AttachedTo      string `json:"attached_to"`
	AttachExpiresAt string `json:"attach_expires_at"`
	OwnerPID        int    `json:"owner_pid"`
	PendingInputs   int    `json:"pending_inputs"`
	Interrupted     bool   `json:"interrupted"`
	Paused          string `json:"paused,omitempty"`
	// Survivors are processes carrying the session's tag although its owner is dead.
	Survivors []state.Proc `json:"survivors,omitempty"`
}

// supervisorExitGrace is how long a recorded agent process may take to go
// away after its owner died before it counts as left running.
const supervisorExitGrace = 500 * time.Millisecond

// observe probes the owner lock and the recorded agent pid and computes the verdict and badge.
func observe(h *state.Home, s *state.Session, now time.Time) Status {
	alive, _ := h.OwnerAlive(s.ID)
	if !alive && s.State == state.StateRunning && (s.CurrentTurn == "" || state.TurnClosed(h.LogPath(s.ID), s.CurrentTurn)) {
		// The owner died after writing turn_ended but before updating the
		// record: the log is the truth, the turn is complete.
		c := *s
		c.State, c.CurrentTurn = state.StateWaitingForInput, ""
		s = &c
	}
	if !alive && s.PermissionPending && s.Paused == "" && (s.State == state.StateRunning || s.State == state.StateStarting) {
		// What resume will do: a turn cut off during a permission question pauses.
		c := *s
		c.Paused = acp.PausePermission
		s = &c
	}
	// An agent's supervisor ends itself moments after its owner dies: give it that moment.
	agentAlive := !alive && s.AgentPID != 0 && state.AliveAfter(s.AgentPID, s.AgentStart, supervisorExitGrace)
	v := state.Decide(s, state.Observation{OwnerAlive: alive, AgentAlive: agentAlive, Now: now})
	st := Status{NeedsResume: v.NeedsResume, IsResumable: v.IsResumable, Reason: v.Reason,
		Badge: state.Badge(s, alive), Interrupted: v.Interrupted, Paused: s.Paused}
	if alive {
		st.OwnerPID = s.OwnerPID
	}
	if l, _ := h.ReadLease(s.ID); l.Live(now) {
		st.AttachedTo, st.AttachExpiresAt = l.AttachedTo, l.AttachExpiresAt.Format(time.RFC3339)
	}
	st.Attachable = v.IsResumable && !state.IsTerminal(s.State) && (st.AttachedTo == "" || st.AttachedTo == state.DefaultHolder())
	st.PendingInputs = h.PendingInputs(s)
	return st
}

// Run prints the verdict and the session.
func (c *StatusCmd) Run(env *Env) error {
	h, s, err := c.load(env, nil)
	if err != nil {
		return err
	}
	if s.Worktree != nil && !state.IsTerminal(s.State) {
		wt := state.CheckWorktree(*s.Worktree)
		s.Worktree = &wt
	}
	st := observe(h, s, env.Now())
	if alive, _ := h.OwnerAlive(s.ID); !alive {
		st.Survivors = state.TaggedProcesses(h.Dir)[s.ID]
	}
	env.Out.Object(map[string]any{"session": s, "status": st}, func(w io.Writer) {
		fmt.Fprintf(w, "session   %s  [%s]\n", s.ID, st.Badge)
		fmt.Fprintf(w, "title     %s\n", s.Title)
		fmt.Fprintf(w, "agent     %s   workspace %s\n", s.Agent, s.Workspace)
		fmt.Fprintf(w, "cwd       %s\n", s.Cwd)
		fmt.Fprintf(w, "state     %s (task %s)", s.State, s.TaskState)
		if s.StopReason != "" {
			fmt.Fprintf(w, ", last turn: %s", s.StopReason)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "verdict   %s (needs resume: %v, resumable: %v)\n", st.Reason, st.NeedsResume, st.IsResumable)
		if s.Worktree != nil {
			fmt.Fprintf(w, "worktree  %s on %s", s.Worktree.Path, s.Worktree.Branch)
			if !s.Worktree.Valid {
				fmt.Fprintf(w, " (problem: %s)", s.Worktree.Problem)
			}
			fmt.Fprintln(w)
		}
		if s.Paused != "" {
			fmt.Fprintf(w, "paused    %s\n", s.Paused)
		}
		if st.AttachedTo != "" {
			fmt.Fprintf(w, "attached  %s until %s\n", st.AttachedTo, st.AttachExpiresAt)
		}
		if st.PendingInputs > 0 {
			fmt.Fprintf(w, "queued    %d input(s) waiting\n", st.PendingInputs)
		}
		if s.ErrorMessage != "" {
			fmt.Fprintf(w, "error     %s\n", s.ErrorMessage)
		}
		for _, p := range st.Survivors {
			fmt.Fprintf(w, "leftover  pid %d outlived its owner: %s (kill %d)\n", p.PID, history.Clip(p.Command, 60), p.PID)
		}
		fmt.Fprintf(w, "activity  %s\n", s.LastActivityAt.Local().Format(time.RFC3339))
		if next := nextStep(s, st); next != "" {
			fmt.Fprintf(w, "next      %s\n", next)
		}
	})
	return nil
}

// nextStep is the command that moves the session on.
func nextStep(s *state.Session, st Status) string {
	switch {
	case st.Badge == state.BadgeNeedsResume:
		return "kandev resume " + s.ID
	case st.Badge == state.BadgePaused:
		return "kandev recap " + s.ID + ", then kandev prompt " + s.ID + " \"...\""
	case state.IsTerminal(s.State):
		return "kandev start --parent " + s.ID + " \"...\""
	case st.Reason == state.ReasonAgentRunning:
		return "kandev events " + s.ID + " --follow"
	}
	return "kandev prompt " + s.ID + " \"...\""
}
