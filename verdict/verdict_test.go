package verdict

import (
	"testing"
	"time"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

func TestDecide_FirstMatchingRuleWins(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	bad := &worktree.Worktree{Path: "/x", Branch: "main", Valid: false, Problem: "worktree /x no longer exists"}
	cases := []struct {
		name string
		s    state.Session
		o    Observation
		want Verdict
	}{
		{"owner alive beats everything", state.Session{State: state.StateRunning, ResumeToken: "t", AgentLaunched: true}, Observation{OwnerAlive: true, AgentAlive: true},
			Verdict{NeedsResume: false, IsResumable: true, Reason: ReasonAgentRunning}},
		{"owner alive on a terminal session", state.Session{State: state.StateCompleted}, Observation{OwnerAlive: true},
			Verdict{NeedsResume: false, IsResumable: false, Reason: ReasonAgentRunning}},
		{"stale agent of a dead owner", state.Session{State: state.StateRunning, ResumeToken: "t", AgentLaunched: true}, Observation{AgentAlive: true},
			Verdict{NeedsResume: false, IsResumable: true, Reason: ReasonStaleExecution, Interrupted: true}},
		{"terminal", state.Session{State: state.StateCancelled, ResumeToken: "t", AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: false, IsResumable: false, Reason: ReasonTerminal}},
		{"token and active (idle)", state.Session{State: state.StateWaitingForInput, ResumeToken: "t", AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunning}},
		{"token and running: interrupted", state.Session{State: state.StateRunning, ResumeToken: "t", AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunning, Interrupted: true}},
		{"no token but launched", state.Session{State: state.StateStarting, AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunningNew, Interrupted: true}},
		{"never launched", state.Session{State: state.StateCreated}, Observation{},
			Verdict{NeedsResume: false, IsResumable: true, Reason: ReasonNotStarted}},
		{"invalid worktree makes it not resumable", state.Session{State: state.StateWaitingForInput, ResumeToken: "t", AgentLaunched: true, Worktree: bad}, Observation{},
			Verdict{NeedsResume: true, IsResumable: false, Reason: ReasonAgentNotRunning}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Now = now
			if got := Decide(&tc.s, tc.o); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBadge_Precedence(t *testing.T) {
	cases := []struct {
		s     state.Session
		alive bool
		want  string
	}{
		{state.Session{State: state.StateCompleted, Pause: &state.Pause{Kind: state.PauseBudget}}, false, BadgeDone},
		{state.Session{State: state.StateFailed}, true, BadgeFailed},
		{state.Session{State: state.StateCancelled}, false, BadgeCancelled},
		{state.Session{State: state.StateRunning, Pause: &state.Pause{Kind: state.PauseBudget}}, false, BadgePaused},
		{state.Session{State: state.StateRunning}, false, BadgeNeedsResume},
		{state.Session{State: state.StateStarting}, false, BadgeNeedsResume},
		{state.Session{State: state.StateRunning, PermissionPending: true}, true, BadgeWaitingForPermission},
		{state.Session{State: state.StateRunning}, true, BadgeRunning},
		{state.Session{State: state.StateWaitingForInput, Limit: &state.UsageLimit{}}, false, BadgeWaitingForLimit},
		{state.Session{State: state.StateWaitingForInput, Limit: &state.UsageLimit{}}, true, BadgeWaitingForLimit}, // a warm owner idles until the reset
		{state.Session{State: state.StateWaitingForInput, Limit: &state.UsageLimit{}, Stopped: true}, false, BadgeWaitingForLimit},
		{state.Session{State: state.StateRunning, Limit: &state.UsageLimit{}}, true, BadgeRunning},
		{state.Session{State: state.StateWaitingForInput, Limit: &state.UsageLimit{}, Pause: &state.Pause{Kind: state.PauseBudget}}, false, BadgePaused},
		{state.Session{State: state.StateCompleted, Limit: &state.UsageLimit{}}, false, BadgeDone},
		{state.Session{State: state.StateWaitingForInput, Stopped: true}, false, BadgeStopped},
		{state.Session{State: state.StateWaitingForInput}, false, BadgeIdle},
		{state.Session{State: state.StateWaitingForInput}, true, BadgeIdle},
		{state.Session{State: "BOGUS"}, false, BadgeUnknown},
	}
	for _, tc := range cases {
		if got := Badge(&tc.s, tc.alive); got != tc.want {
			t.Errorf("Badge(%+v, alive=%v) = %s, want %s", tc.s, tc.alive, got, tc.want)
		}
	}
}

func TestValidateTTL(t *testing.T) {
	cases := []struct {
		in   int64
		def  int
		want time.Duration
		err  bool
	}{
		{0, 0, 900 * time.Second, false},
		{-5, 0, 900 * time.Second, false},
		{0, 60, 60 * time.Second, false},
		{30, 60, 30 * time.Second, false},
		{86400, 0, 86400 * time.Second, false},
		{86401, 0, 0, true},
		{1 << 62, 0, 0, true},
	}
	for _, tc := range cases {
		got, err := state.ValidateTTL(tc.in, tc.def)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ValidateTTL(%d, %d) = %v, %v", tc.in, tc.def, got, err)
		}
	}
}
