package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

func TestAssess_EverySessionSituation(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	cmd := []string{"kandev", "demo-agent"}
	okTree := &worktree.Worktree{Path: "/w", Branch: "feature", Valid: true}
	offBranch := &worktree.Worktree{Path: "/w", Branch: "feature", Problem: `worktree /w is on branch "other"`, OffBranch: true}
	gone := &worktree.Worktree{Path: "/w", Branch: "feature", Problem: "worktree /w no longer exists"}
	recent := []time.Time{now.Add(-time.Minute), now.Add(-2 * time.Minute), now.Add(-3 * time.Minute)}
	old := []time.Time{now.Add(-time.Hour), now.Add(-2 * time.Hour), now.Add(-3 * time.Hour)}
	others := &state.Lease{SessionID: "s1", AttachedTo: "editor", AttachExpiresAt: now.Add(time.Minute)}
	mine := &state.Lease{SessionID: "s1", AttachedTo: "me", AttachExpiresAt: now.Add(time.Minute)}
	awaiting := func(s *state.Session) { s.Interrupted = &state.Interruption{Turn: "t2"} }
	unrepaired := func(s *state.Session) { s.State, s.CurrentTurn = state.StateRunning, "t2" }
	paused := func(kind string) func(*state.Session) {
		return func(s *state.Session) { s.Pause = &state.Pause{Kind: kind, Reason: "r", Turn: "t2"} }
	}
	type want struct {
		reason, badge           string
		resumable, interrupted  bool
		pause                   string // pause kind in force, "" none
		cont, drop              bool
		cleared, clearedBecause string
		next                    string
	}
	cases := []struct {
		name string
		mod  []func(*state.Session)
		obs  func(*Observation)
		want want
	}{
		{"owner alive mid-turn", []func(*state.Session){unrepaired}, func(o *Observation) { o.OwnerAlive = true },
			want{reason: ReasonAgentRunning, badge: BadgeRunning, resumable: true, next: "kandev wait s1 --until " + UntilTurnEnds}},
		{"warm owner, idle: a prompt goes straight to it", nil, func(o *Observation) { o.OwnerAlive = true },
			want{reason: ReasonAgentRunning, badge: BadgeIdle, resumable: true, next: `kandev prompt s1 "..."`}},
		{"owner alive, another holder's lease", nil, func(o *Observation) { o.OwnerAlive, o.Lease = true, others },
			want{reason: ReasonAgentRunning, badge: BadgeIdle, next: `kandev prompt s1 "..." --force`}},
		{"owner alive, permission parked", []func(*state.Session){unrepaired, func(s *state.Session) { s.PermissionPending = true }}, func(o *Observation) { o.OwnerAlive = true },
			want{reason: ReasonAgentRunning, badge: BadgeWaitingForPermission, resumable: true, next: "kandev approve s1"}},
		{"owner alive, the agent's question parked", []func(*state.Session){unrepaired, func(s *state.Session) {
			s.PermissionPending, s.ParkedRequests = true, []state.ParkedRequest{{ID: "r1", Kind: state.ParkedQuestion}}
		}}, func(o *Observation) { o.OwnerAlive = true },
			want{reason: ReasonAgentRunning, badge: BadgeWaitingForPermission, resumable: true, next: "kandev answer s1 VALUE"}},
		{"stale agent of a dead owner", []func(*state.Session){unrepaired}, func(o *Observation) { o.AgentAlive = true },
			want{reason: ReasonStaleExecution, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, next: "kandev resume s1"}},
		{"terminal, even with a turn waiting", []func(*state.Session){awaiting, func(s *state.Session) { s.State = state.StateCompleted }}, nil,
			want{reason: ReasonTerminal, badge: BadgeDone, next: `kandev start --parent s1 "..."`}},
		{"interrupted turn not yet repaired", []func(*state.Session){unrepaired}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, next: "kandev resume s1"}},
		{"a usage limit not yet reset", []func(*state.Session){func(s *state.Session) { r := now.Add(time.Hour); s.Limit = &state.UsageLimit{ResetAt: &r} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeWaitingForLimit, resumable: true, next: `kandev prompt s1 "..."`}},
		{"a usage limit that has reset", []func(*state.Session){func(s *state.Session) { r := now.Add(-time.Second); s.Limit = &state.UsageLimit{ResetAt: &r} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeWaitingForLimit, resumable: true, next: "kandev recover s1"}},
		{"an interrupted turn held back before the limit: it waits for the reset", []func(*state.Session){awaiting, func(s *state.Session) { r := now.Add(time.Hour); s.Limit = &state.UsageLimit{ResetAt: &r, Held: true} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeWaitingForLimit, resumable: true, interrupted: true, cont: true, next: `kandev prompt s1 "..."`}},
		{"an interrupted turn held back, the window has reset", []func(*state.Session){awaiting, func(s *state.Session) {
			r := now.Add(-time.Second)
			s.Limit = &state.UsageLimit{ResetAt: &r, Held: true}
		}}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeWaitingForLimit, resumable: true, interrupted: true, cont: true, next: "kandev resume s1"}},
		{"unattended work after a reset spent its bound", []func(*state.Session){awaiting, func(s *state.Session) { s.AfterReset = &state.AfterReset{Turns: 3, Exhausted: "ran 3 turns"} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, resumable: false, interrupted: true, pause: state.PauseAfterReset, next: `kandev prompt s1 "..."`}},
		{"a usage limit with a warm owner", []func(*state.Session){func(s *state.Session) { s.Limit = &state.UsageLimit{} }}, func(o *Observation) { o.OwnerAlive = true },
			want{reason: ReasonAgentRunning, badge: BadgeWaitingForLimit, resumable: true, next: `kandev prompt s1 "..."`}},
		{"repaired turn waiting for its continuation", []func(*state.Session){awaiting}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, next: "kandev resume s1"}},
		{"turn already continued once", []func(*state.Session){awaiting, func(s *state.Session) { s.ContinuedTurn = "t2" }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeIdle, resumable: true, next: `kandev prompt s1 "..."`}},
		{"record lagged behind a finished turn", []func(*state.Session){unrepaired}, func(o *Observation) { o.TurnClosed = true },
			want{reason: ReasonAgentNotRunning, badge: BadgeIdle, resumable: true, next: `kandev prompt s1 "..."`}},
		{"unaccepted initial prompt is sent again, not continued", []func(*state.Session){unrepaired, func(s *state.Session) { s.InitialPrompt = "hi" }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, next: "kandev resume s1"}},
		{"first prompt cut off by SIGTERM before the agent took it", []func(*state.Session){func(s *state.Session) { s.InitialPrompt = "hi" }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, next: "kandev resume s1"}},
		{"first prompt of a start killed before the agent launched", []func(*state.Session){func(s *state.Session) {
			s.State, s.AgentLaunched, s.ResumeToken, s.InitialPrompt = state.StateCreated, false, "", "hi"
		}}, nil,
			want{reason: ReasonAgentNotRunningNew, badge: BadgeNeedsResume, resumable: true, interrupted: true, next: "kandev resume s1"}},
		{"idle", nil, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeIdle, resumable: true, next: `kandev prompt s1 "..."`}},
		{"never launched", []func(*state.Session){func(s *state.Session) { s.State, s.AgentLaunched, s.ResumeToken = state.StateCreated, false, "" }}, nil,
			want{reason: ReasonNotStarted, badge: BadgeIdle, resumable: true, next: `kandev prompt s1 "..."`}},
		{"stopped, nothing waiting", []func(*state.Session){func(s *state.Session) { s.Stopped = true }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeStopped, resumable: true, next: `kandev prompt s1 "..."`}},
		{"worktree on another branch pauses the waiting turn", []func(*state.Session){awaiting}, func(o *Observation) { o.Worktree = offBranch },
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PauseWorktree, next: "git -C /w checkout feature"}},
		{"broken worktree without a waiting turn is no pause", nil, func(o *Observation) { o.Worktree = gone },
			want{reason: ReasonAgentNotRunning, badge: BadgeIdle, next: `kandev start --parent s1 "..."`}},
		{"permission pending when the owner died", []func(*state.Session){unrepaired, func(s *state.Session) { s.PermissionPending = true }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PausePermissionPending, next: `kandev prompt s1 "..."`}},
		{"permission open in the repaired turn", []func(*state.Session){func(s *state.Session) { s.Interrupted = &state.Interruption{Turn: "t2", PermissionOpen: true} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PausePermissionPending, next: `kandev prompt s1 "..."`}},
		{"interrupted maintenance turn pauses", []func(*state.Session){func(s *state.Session) { s.Interrupted = &state.Interruption{Turn: "t2", Maintenance: true} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PauseMaintenance, next: `kandev prompt s1 "..."`}},
		{"agent command changed", []func(*state.Session){awaiting}, func(o *Observation) { o.Policy.Command = []string{"other"} },
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PauseAgentChanged, next: `kandev prompt s1 "..."`}},
		{"permission mode changed", []func(*state.Session){awaiting}, func(o *Observation) { o.Policy.PermissionMode = "deny-all" },
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PausePermissionModeChanged, next: `kandev prompt s1 "..."`}},
		{"setup changed since the turn ran", []func(*state.Session){awaiting, func(s *state.Session) { s.TurnSetup, s.Setup = &state.Setup{}, &state.Setup{Mode: "code"} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PauseSetupChanged, next: `kandev prompt s1 "..."`}},
		{"same setup as the turn ran under continues", []func(*state.Session){awaiting, func(s *state.Session) { s.TurnSetup, s.Setup = &state.Setup{Mode: "code"}, &state.Setup{Mode: "code"} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, next: "kandev resume s1"}},
		{"a record without the turn's setup (older format) continues", []func(*state.Session){awaiting, func(s *state.Session) { s.Setup = &state.Setup{Mode: "code"} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, next: "kandev resume s1"}},
		{"setup pause clears when the setup is back", []func(*state.Session){awaiting, paused(state.PauseSetupChanged), func(s *state.Session) { s.TurnSetup, s.Setup = &state.Setup{Mode: "ask"}, &state.Setup{Mode: "ask"} }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, cleared: state.PauseSetupChanged, clearedBecause: "setup is the one the turn ran under", next: "kandev resume s1"}},
		{"stopped with a turn waiting", []func(*state.Session){awaiting, func(s *state.Session) { s.Stopped = true }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PauseStopped, next: `kandev prompt s1 "..."`}},
		{"budget spent", []func(*state.Session){awaiting, func(s *state.Session) { s.RestartAttempts = recent }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PauseBudget, next: `kandev prompt s1 "..."`}},
		{"budget pause clears once the window passed", []func(*state.Session){awaiting, paused(state.PauseBudget), func(s *state.Session) { s.RestartAttempts = old }}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, cleared: state.PauseBudget, clearedBecause: "window", next: "kandev resume s1"}},
		{"worktree pause clears when the branch is back", []func(*state.Session){awaiting, paused(state.PauseWorktree)}, func(o *Observation) { o.Worktree = okTree },
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, cleared: state.PauseWorktree, clearedBecause: "back on branch feature", next: "kandev resume s1"}},
		{"a recorded pause that still holds stays", []func(*state.Session){awaiting, paused(state.PauseAgentChanged)}, func(o *Observation) { o.Policy.Command = []string{"other"} },
			want{reason: ReasonAgentNotRunning, badge: BadgePaused, interrupted: true, pause: state.PauseAgentChanged, next: `kandev prompt s1 "..."`}},
		{"auto_continue off: repaired, never continued, no pause", []func(*state.Session){awaiting, paused(state.PauseBudget)}, func(o *Observation) { o.Policy.AutoContinue = false },
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, drop: true, cleared: state.PauseBudget, clearedBecause: "switched off", next: "kandev resume s1"}},
		{"resume --no-continue", []func(*state.Session){awaiting}, func(o *Observation) { o.Policy.NoContinue = true },
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, drop: true, next: "kandev resume s1"}},
		{"no pause without a waiting turn", []func(*state.Session){paused(state.PauseBudget)}, nil,
			want{reason: ReasonAgentNotRunning, badge: BadgeIdle, resumable: true, cleared: state.PauseBudget, clearedBecause: "no interrupted turn", next: `kandev prompt s1 "..."`}},
		{"another holder's lease", []func(*state.Session){awaiting}, func(o *Observation) { o.Lease = others },
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, interrupted: true, cont: true, next: `kandev prompt s1 "..." --force`}},
		{"own lease", []func(*state.Session){awaiting}, func(o *Observation) { o.Lease = mine },
			want{reason: ReasonAgentNotRunning, badge: BadgeNeedsResume, resumable: true, interrupted: true, cont: true, next: "kandev resume s1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := state.Session{ID: "s1", State: state.StateWaitingForInput, ResumeToken: "tok", AgentLaunched: true, AgentCommand: cmd,
				TurnPermissionMode: "approve-all", Turns: 2, Worktree: okTree}
			for _, m := range tc.mod {
				m(&s)
			}
			o := Observation{Holder: "me", Now: now, Policy: ContinuationPolicy{AutoContinue: true, MaxAttempts: 3, Window: 5 * time.Minute, Command: cmd, PermissionMode: "approve-all"}}
			if tc.obs != nil {
				tc.obs(&o)
			}
			a := Assess(&s, o)
			d := a.Continuation
			got := want{reason: a.Reason, badge: a.Badge, resumable: a.Resumable, interrupted: a.Interrupted, cont: d.Continue, drop: d.Drop, next: a.Next}
			if p := a.Pause(); p != nil {
				got.pause = p.Kind
			}
			if d.Cleared != nil {
				got.cleared = d.Cleared.Kind
				if strings.Contains(d.ClearedBecause, tc.want.clearedBecause) {
					got.clearedBecause = tc.want.clearedBecause
				} else {
					got.clearedBecause = d.ClearedBecause
				}
			}
			if got != tc.want {
				t.Fatalf("\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestAssess_PauseNamesItsTurnAndHumanReason(t *testing.T) {
	s := state.Session{ID: "s1", State: state.StateWaitingForInput, ResumeToken: "tok", AgentLaunched: true, TurnPermissionMode: "approve-all",
		Interrupted: &state.Interruption{Turn: "t7"}}
	a := Assess(&s, Observation{Policy: ContinuationPolicy{AutoContinue: true, MaxAttempts: 3, Window: time.Minute, PermissionMode: "ask"}})
	p := a.Pause()
	if p == nil || p.Turn != "t7" || !strings.Contains(p.Reason, "approve-all") || !strings.Contains(p.Reason, "ask") {
		t.Fatalf("pause %+v", p)
	}
}

// What status says a session needs agrees with what the commands then do:
// a paused session is not resumable (resume exits 5), an idle one needs
// nothing but a prompt, and a warm one is not followed until its linger ends.
func TestAssess_StatusSaysWhatTheCommandsDo(t *testing.T) {
	cases := []struct {
		name        string
		mod         func(*state.Session)
		ownerAlive  bool
		isResumable bool
		next, why   string
	}{
		{"paused: not resumable, a prompt carries on", func(s *state.Session) { s.Interrupted = &state.Interruption{Turn: "t2"}; s.Stopped = true },
			false, false, `kandev prompt s1 "..."`, "paused"},
		{"idle with no agent: nothing to resume", nil, false, true, `kandev prompt s1 "..."`, "nothing to resume"},
		{"idle with a warm agent: prompt it", nil, true, true, `kandev prompt s1 "..."`, "straight to it"},
		{"cut off: resume", func(s *state.Session) { s.Interrupted = &state.Interruption{Turn: "t2"} }, false, true, "kandev resume s1", "cut off"},
		{"stopped: a prompt restarts it", func(s *state.Session) { s.Stopped = true }, false, true, `kandev prompt s1 "..."`, "stopped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := state.Session{ID: "s1", State: state.StateWaitingForInput, ResumeToken: "tok", AgentLaunched: true, TurnPermissionMode: "ask", Turns: 2}
			if tc.mod != nil {
				tc.mod(&s)
			}
			a := Assess(&s, Observation{OwnerAlive: tc.ownerAlive, Policy: ContinuationPolicy{AutoContinue: true, MaxAttempts: 3, Window: time.Minute, PermissionMode: "ask"}})
			if a.IsResumable != tc.isResumable || a.Resumable && !a.IsResumable || a.Next != tc.next || !strings.Contains(a.Why, tc.why) {
				t.Fatalf("is_resumable %v (resume acts: %v), next %q, why %q", a.IsResumable, a.Resumable, a.Next, a.Why)
			}
		})
	}
}
