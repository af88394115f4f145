package commands

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/container"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/remote"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// statusCmd is kandev status.
type statusCmd struct {
	SessionRef
}

// Help shows an example.
func (c *statusCmd) Help() string { return "Example:\n  kandev status --latest" }

// Status is the status object `kandev status` prints (docs/commands.md).
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
	// WarmUntil is when a lingering owner stops its idle agent.
	WarmUntil string `json:"warm_until,omitempty"`
	// PermissionRequests are the parked requests kandev approve and deny
	// answer, oldest first (each with its request_id).
	PermissionRequests []state.ParkedRequest `json:"permission_requests,omitempty"`
	Interrupted        bool                  `json:"interrupted"`
	// Paused is the pause's reason; Pause says its kind and turn.
	Paused string       `json:"paused,omitempty"`
	Pause  *state.Pause `json:"pause,omitempty"`
	// Next is one command that succeeds for the session as it is ("..."
	// stands for a message).
	Next string `json:"next"`
	// Trust is "pending" while MCP servers a pull brought wait for kandev
	// trust (nothing of them runs here until then); empty otherwise.
	Trust string `json:"trust,omitempty"`
	// Survivors are processes carrying the session's tag although its owner is dead.
	Survivors []proc.Proc `json:"survivors,omitempty"`
	// why says in words what the session needs (text output).
	why string
}

func (c *statusCmd) readsOnly() bool { return true }

// Run prints the verdict and the session.
func (c *statusCmd) Run(env *Env) error {
	h, s, err := c.load(env, needAny)
	if err != nil {
		return err
	}
	p, err := newProbe(env, "", false)
	if err != nil {
		return err
	}
	// Looking at the session settles its pause: cleared when its cause is
	// gone, recorded when one is found.
	s, a := p.settle(s, p.assess(s, probeFull))
	if a.Worktree != nil && !state.IsTerminal(s.State) {
		s.Worktree = a.Worktree // as checked now
	}
	st := statusOf(h, s, a, p)
	if s.TrustPending && !state.IsTerminal(s.State) {
		st.Trust, st.Next = "pending", "kandev trust "+s.ID
	}
	if s.PulledCwd != "" && !state.IsTerminal(s.State) {
		r := owner.PulledCwdRefusal(s)
		st.Pause = &state.Pause{Kind: state.PausePulledCwd, Reason: r.Reason}
		st.Paused, st.IsResumable, st.Badge = r.Reason, false, verdict.BadgePaused
		st.Next = "kandev start --parent " + s.ID + " --cwd DIR"
	}
	// An agent its supervisor still stops is no survivor; after a supervisor
	// that ended the agent's tree, none can be (no process list to read).
	if alive, _ := h.OwnerAlive(s.ID); !alive && !h.AgentAlive(s.ID) && h.AgentLeftoversPossible(s.ID) {
		st.Survivors = proc.TaggedProcesses(h.Dir)[s.ID]
	}
	ctr, ctrErr := containerStatus(env, h, s)
	kids := sessionChildren(h, s) // children.go
	out := statusOutput{Container: ctr, Session: s, Status: st, Sync: remote.SessionStatus(h, s.ID), Children: kids}
	env.Out.Object(out, func(w io.Writer) { writeStatusText(w, out, ctrErr, env.Now()) })
	return nil
}

// writeStatusText is status's text output: the session, its verdict and
// one line for each thing that holds it or waits on it, then what to do next.
func writeStatusText(w io.Writer, out statusOutput, ctrErr error, now time.Time) {
	s, st, ctr, kids := out.Session, out.Status, out.Container, out.Children
	fmt.Fprintf(w, "session   %s  [%s]\n", s.ID, st.Badge)
	fmt.Fprintf(w, "title     %s\n", printableLine(s.Title))
	fmt.Fprintf(w, "agent     %s   workspace %s\n", s.Agent, s.Workspace)
	if s.Setup != nil {
		fmt.Fprintf(w, "setup     %s\n", printableLine(setup.Describe(s.Setup)))
	}
	fmt.Fprintf(w, "cwd       %s\n", s.Cwd)
	fmt.Fprintf(w, "state     %s (task %s)", s.State, s.TaskState)
	if s.StopReason != "" {
		fmt.Fprintf(w, ", last turn: %s", s.StopReason)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "verdict   %s: %s\n", st.Reason, st.why)
	if s.Worktree != nil {
		fmt.Fprintf(w, "worktree  %s on %s", s.Worktree.Path, s.Worktree.Branch)
		if !s.Worktree.Valid {
			fmt.Fprintf(w, " (problem: %s)", s.Worktree.Problem)
		}
		fmt.Fprintln(w)
	}
	if st.Pause != nil {
		fmt.Fprintf(w, "paused    %s\n", st.Pause.Reason)
	}
	if st.Trust != "" {
		fmt.Fprintf(w, "trust     %s: MCP servers %s came from another machine and do not run here until kandev trust %s\n", st.Trust, printableLine(strings.Join(serverNames(s), ", ")), s.ID)
	}
	if st.AttachedTo != "" {
		fmt.Fprintf(w, "attached  %s until %s\n", st.AttachedTo, textTimestamp(st.AttachExpiresAt))
	}
	if st.WarmUntil != "" {
		fmt.Fprintf(w, "warm      agent kept running until %s (kandev close %s ends it now)\n", textTimestamp(st.WarmUntil), s.ID)
	}
	for _, r := range st.PermissionRequests {
		if r.Kind == state.ParkedQuestion {
			fmt.Fprintf(w, "waiting   question %s: %s (kandev answer %s --request %s VALUE, or deny)\n", r.ID, printableLine(r.ToolName), s.ID, r.ID)
			continue
		}
		fmt.Fprintf(w, "waiting   permission %s: %s (kandev approve %s --request %s, or deny)\n", r.ID, printableLine(r.ToolName), s.ID, r.ID)
	}
	limitLines(w, s, now)
	if st.PendingInputs > 0 {
		fmt.Fprintf(w, "queued    %d input(s) waiting\n", st.PendingInputs)
	}
	if s.ErrorMessage != "" {
		fmt.Fprintf(w, "error     %s\n", s.ErrorMessage)
	}
	containerLine(w, s, ctr, ctrErr)
	for _, p := range st.Survivors {
		fmt.Fprintf(w, "leftover  pid %d outlived its owner: %s (kill %d)\n", p.PID, history.Clip(p.Command, 60), p.PID)
	}
	if out.Sync != nil {
		fmt.Fprintf(w, "remote    %s\n", out.Sync.Line())
	}
	childLines(w, kids) // children.go
	fmt.Fprintf(w, "activity  %s\n", textTime(s.LastActivityAt))
	fmt.Fprintf(w, "next      %s\n", st.Next)
}

// serverNames are the names of the session's MCP servers.
func serverNames(s *state.Session) []string {
	var out []string
	for _, m := range s.MCPConfig {
		out = append(out, m.Name)
	}
	return out
}

// containerStatus is the session's container as its engine reports it
// (nil for a session that runs no agent in a container, or has none now).
func containerStatus(env *Env, h *state.Home, s *state.Session) (*container.Container, error) {
	if s.Runtime != config.RuntimeContainer {
		return nil, nil
	}
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	c, err := container.Of(context.Background(), cfg.Runtime, h.Dir, s.ID)
	if c == nil && err == nil {
		c = &container.Container{Session: s.ID, State: "gone"}
	}
	return c, err
}

// containerLine says where the agent of a container session is.
func containerLine(w io.Writer, s *state.Session, c *container.Container, err error) {
	switch {
	case err != nil:
		fmt.Fprintf(w, "container unknown: %s\n", err)
	case c == nil:
	case c.State == "gone":
		fmt.Fprintf(w, "container none (the next prompt creates one and restores the conversation)\n")
	case c.Running():
		fmt.Fprintf(w, "container %s running (the next command reattaches to its agent)\n", c.ID)
	default:
		fmt.Fprintf(w, "container %s %s (the next prompt starts it again and restores the conversation)\n", c.ID, c.State)
	}
}
