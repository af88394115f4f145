package commands

import (
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// probe gathers, for verdict.Assess, what a session's record does not say:
// the owner lock, the recorded agent pid, the log's view of the current
// turn, the worktree and the lease; and, once per command, the
// configuration and permission mode a relaunch would run under.
type probe struct {
	h          *state.Home
	cfg        *config.Config
	commands   map[string][]string // agent name -> profile command
	mode       string
	holder     string
	noContinue bool
	now        time.Time
	// leases, when set, are the sessions a directory listing saw a lease
	// file for; the lease of any other is not read.
	leases map[string]bool
}

func newProbe(env *Env, holder string, noContinue bool) (*probe, error) {
	h, err := env.Home()
	if err != nil {
		return nil, err
	}
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	mode, err := env.PermissionMode()
	if err != nil {
		return nil, err
	}
	return probeWith(h, cfg, mode, holder, noContinue, env.Now()), nil
}

// probeWith is a probe from parts already loaded.
func probeWith(h *state.Home, cfg *config.Config, mode, holder string, noContinue bool, now time.Time) *probe {
	if holder == "" {
		holder = state.DefaultHolder()
	}
	p := &probe{h: h, cfg: cfg, commands: map[string][]string{}, mode: mode, holder: holder, noContinue: noContinue, now: now}
	for _, prof := range acp.Profiles(cfg) {
		p.commands[prof.Name] = prof.Command
	}
	return p
}

// policy is what a continuation of s is checked against.
func (p *probe) policy(s *state.Session) verdict.ContinuationPolicy {
	return owner.ContinuationPolicy(p.cfg, p.commands[s.Agent], p.mode, p.noContinue)
}

// How much assess probes.
const (
	// probeBadge: what the badge needs. The owner lock and the log only
	// while the record says a turn runs or one waits, the worktree only
	// when one waits: an idle session's badge depends on neither.
	probeBadge = iota
	// probeResumable adds the worktree and the lease (list --resumable):
	// whether an owner is alive changes nothing for an idle session, since
	// resume either reattaches or relaunches it.
	probeResumable
	// probeFull probes everything (status, resume).
	probeFull
)

// assess probes s as deep as level and decides.
func (p *probe) assess(s *state.Session, level int) verdict.Assessment {
	o := verdict.Observation{Holder: p.holder, Now: p.now, Policy: p.policy(s)}
	running := s.State == state.StateRunning || s.State == state.StateStarting
	awaiting, _ := s.AwaitingContinuation()
	full := level >= probeResumable
	if level == probeFull || running || awaiting != "" {
		o.OwnerAlive, _ = p.h.OwnerAlive(s.ID)
		// An agent's supervisor ends itself moments after its owner dies: give it that moment.
		o.AgentAlive = !o.OwnerAlive && s.AgentPID != 0 && proc.AliveAfter(s.AgentPID, s.AgentStart, supervisorExitGrace)
	}
	if !o.OwnerAlive && s.State == state.StateRunning {
		o.TurnClosed = s.CurrentTurn == "" || eventlog.TurnClosed(p.h.LogPath(s.ID), s.CurrentTurn)
	}
	if s.Worktree != nil && !state.IsTerminal(s.State) && (full || awaiting != "") {
		wt := worktree.CheckWorktree(*s.Worktree)
		o.Worktree = &wt
	}
	if full && (p.leases == nil || p.leases[s.ID]) {
		o.Lease, _ = p.h.ReadLease(s.ID)
	}
	return verdict.Assess(s, o)
}

// settle records, when no owner runs the session, a pause whose cause is
// gone (cleared, with an info marker) or one found now, and returns the
// session and assessment as they then are.
func (p *probe) settle(s *state.Session, a verdict.Assessment) (*state.Session, verdict.Assessment) {
	d := a.Continuation
	changed := d.Cleared != nil || d.Pause != nil && (s.Pause == nil || *s.Pause != *d.Pause)
	if !changed || state.IsTerminal(s.State) {
		return s, a
	}
	if err := owner.SettlePause(p.h, s.ID, p.policy(s), p.now); err != nil {
		return s, a
	}
	if fresh, err := p.h.LoadSession(s.ID); err == nil {
		s = fresh
	}
	return s, p.assess(s, probeFull)
}

// statusOf is the status object of an assessment.
func statusOf(h *state.Home, s *state.Session, a verdict.Assessment, o *probe) Status {
	st := Status{NeedsResume: a.NeedsResume, IsResumable: a.IsResumable, Reason: a.Reason, Badge: a.Badge,
		Attachable: a.Attachable, Interrupted: a.Interrupted, Pause: a.Pause(), Next: a.Next, why: a.Why}
	if p := a.Pause(); p != nil {
		st.Paused = p.Reason
	}
	if a.Reason == verdict.ReasonAgentRunning {
		st.OwnerPID = s.OwnerPID
		st.PermissionRequests = s.ParkedRequests
		if s.WarmUntil != nil && !turnOpen(s) {
			st.WarmUntil = s.WarmUntil.Format(time.RFC3339)
		}
	}
	if l, _ := h.ReadLease(s.ID); l.Live(o.now) {
		st.AttachedTo, st.AttachExpiresAt = l.AttachedTo, l.AttachExpiresAt.Format(time.RFC3339)
	}
	st.PendingInputs = h.PendingInputs(s)
	return st
}

// observe is the status of s, probed in full.
func (p *probe) observe(s *state.Session) Status {
	return statusOf(p.h, s, p.assess(s, probeFull), p)
}

// supervisorExitGrace is how long a recorded agent process may take to go
// away after its owner died before it counts as left running.
const supervisorExitGrace = 500 * time.Millisecond
