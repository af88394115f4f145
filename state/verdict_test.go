package state

import (
	"testing"
	"time"

	"github.com/kandev/kandev/internal/worktree"
)

func TestDecide_FirstMatchingRuleWins(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	bad := &worktree.Worktree{Path: "/x", Branch: "main", Valid: false, Problem: "worktree /x no longer exists"}
	cases := []struct {
		name string
		s    Session
		o    Observation
		want Verdict
	}{
		{"owner alive beats everything", Session{State: StateRunning, ResumeToken: "t", AgentLaunched: true}, Observation{OwnerAlive: true, AgentAlive: true},
			Verdict{NeedsResume: false, IsResumable: true, Reason: ReasonAgentRunning}},
		{"owner alive on a terminal session", Session{State: StateCompleted}, Observation{OwnerAlive: true},
			Verdict{NeedsResume: false, IsResumable: false, Reason: ReasonAgentRunning}},
		{"stale agent of a dead owner", Session{State: StateRunning, ResumeToken: "t", AgentLaunched: true}, Observation{AgentAlive: true},
			Verdict{NeedsResume: false, IsResumable: true, Reason: ReasonStaleExecution, Interrupted: true}},
		{"terminal", Session{State: StateCancelled, ResumeToken: "t", AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: false, IsResumable: false, Reason: ReasonTerminal}},
		{"token and active (idle)", Session{State: StateWaitingForInput, ResumeToken: "t", AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunning}},
		{"token and running: interrupted", Session{State: StateRunning, ResumeToken: "t", AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunning, Interrupted: true}},
		{"no token but launched", Session{State: StateStarting, AgentLaunched: true}, Observation{},
			Verdict{NeedsResume: true, IsResumable: true, Reason: ReasonAgentNotRunningNew, Interrupted: true}},
		{"never launched", Session{State: StateCreated}, Observation{},
			Verdict{NeedsResume: false, IsResumable: true, Reason: ReasonNotStarted}},
		{"invalid worktree makes it not resumable", Session{State: StateWaitingForInput, ResumeToken: "t", AgentLaunched: true, Worktree: bad}, Observation{},
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
		s     Session
		alive bool
		want  string
	}{
		{Session{State: StateCompleted, Pause: &Pause{Kind: PauseBudget}}, false, BadgeDone},
		{Session{State: StateFailed}, true, BadgeFailed},
		{Session{State: StateCancelled}, false, BadgeCancelled},
		{Session{State: StateRunning, Pause: &Pause{Kind: PauseBudget}}, false, BadgePaused},
		{Session{State: StateRunning}, false, BadgeNeedsResume},
		{Session{State: StateStarting}, false, BadgeNeedsResume},
		{Session{State: StateRunning, PermissionPending: true}, true, BadgeWaitingForPermission},
		{Session{State: StateRunning}, true, BadgeRunning},
		{Session{State: StateWaitingForInput, Limit: &UsageLimit{}}, false, BadgeWaitingForLimit},
		{Session{State: StateWaitingForInput, Limit: &UsageLimit{}}, true, BadgeWaitingForLimit}, // a warm owner idles until the reset
		{Session{State: StateWaitingForInput, Limit: &UsageLimit{}, Stopped: true}, false, BadgeWaitingForLimit},
		{Session{State: StateRunning, Limit: &UsageLimit{}}, true, BadgeRunning},
		{Session{State: StateWaitingForInput, Limit: &UsageLimit{}, Pause: &Pause{Kind: PauseBudget}}, false, BadgePaused},
		{Session{State: StateCompleted, Limit: &UsageLimit{}}, false, BadgeDone},
		{Session{State: StateWaitingForInput, Stopped: true}, false, BadgeStopped},
		{Session{State: StateWaitingForInput}, false, BadgeIdle},
		{Session{State: StateWaitingForInput}, true, BadgeIdle},
		{Session{State: "BOGUS"}, false, BadgeUnknown},
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
		got, err := ValidateTTL(tc.in, tc.def)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ValidateTTL(%d, %d) = %v, %v", tc.in, tc.def, got, err)
		}
	}
}

func TestAttach_SameHolderRenewsOtherHolderConflictsExpiredIsTakenOver(t *testing.T) {
	h, _ := OpenHome(t.TempDir())
	h.CreateSession(&Session{ID: "s", State: StateWaitingForInput})
	now := time.Now()
	if _, err := h.Attach("s", "a", time.Minute, now); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Attach("s", "a", time.Minute, now.Add(time.Second)); err != nil {
		t.Fatalf("renewal: %v", err)
	}
	_, err := h.Attach("s", "b", time.Minute, now.Add(2*time.Second))
	var held *LeaseHeldError
	if !isErr(err, ErrLeaseHeld) || !asLease(err, &held) || held.Lease.AttachedTo != "a" {
		t.Fatalf("other holder: %v", err)
	}
	if _, err := h.Attach("s", "b", time.Minute, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("expired lease not taken over: %v", err)
	}
	if err := h.Detach("s", "a", now.Add(2*time.Minute)); !isErr(err, ErrLeaseHeld) {
		t.Fatalf("detaching someone else's lease: %v", err)
	}
	if err := h.Detach("s", "b", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if l, _ := h.ReadLease("s"); l != nil {
		t.Fatalf("lease left after detach: %+v", l)
	}
}
