package owner

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// planCase is one situation the owner can find and what it must decide.
type planCase struct {
	name    string
	session state.Session // ID, AgentLaunched and ResumeToken are filled in unless fresh
	fresh   bool          // no agent was ever launched for the session
	facts   Facts
	profile acp.Profile // Command and NativeResume default to the demo agent's
	prompt  string
	queued  bool // the caller's own prompt waits in the inbox
	noCont  bool
	caps    *acp.Capabilities // nil: resume and load advertised

	want planWant
}

type planWant struct {
	repair    bool
	follow    FollowUp
	resend    Message
	request   string // the interrupted request the continuation quotes
	notResent string
	forget    bool
	pause     string // the pause kind in force, "" for none
	refused   bool
	initial   string
	step      acp.RestoreMethod
}

var planNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// running is a record whose owner died during turn t2.
func running() state.Session {
	return state.Session{State: state.StateRunning, CurrentTurn: "t2", Turns: 2, AgentCommand: []string{"demo"}, TurnPermissionMode: PermApproveAll}
}

func waiting() state.Session {
	return state.Session{State: state.StateWaitingForInput, Turns: 1, AgentCommand: []string{"demo"}}
}

var (
	repairT2   = TurnRepair{Fixes: []*eventlog.Event{{Type: eventlog.EventTurnEnded, TurnID: "t2"}}, Accepted: true, Delivery: PromptWasSent}
	acceptedT2 = Facts{Repair: repairT2, AwaitingTurn: "t2", Awaiting: TurnInfo{Started: true, Accepted: true, SendRecorded: true, PromptSent: true, UserText: "do it"}}
	// unsentT2 is a turn whose owner died before it wrote the prompt.
	unsentT2 = Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Delivery: PromptNeverSent, Source: eventlog.SourceQueued}, AwaitingTurn: "t2",
		Awaiting: TurnInfo{Started: true, SendRecorded: true, Source: eventlog.SourceQueued, UserText: "remember pear"}}
)

// firstTurnCut is a record whose owner died during turn t1, which carried
// the initial prompt "hi"; info is what the log says of t1.
func firstTurnCut(info TurnInfo) (state.Session, Facts) {
	s := withSession(running(), func(s *state.Session) { s.InitialPrompt, s.CurrentTurn, s.Turns = "hi", "t1", 1 })
	info.Started, info.Source, info.UserText = true, eventlog.SourceInitial, "hi"
	tr := TurnRepair{Fixes: []*eventlog.Event{{Type: eventlog.EventTurnEnded, TurnID: "t1"}}, Source: eventlog.SourceInitial, Delivery: DecideDelivery(info), UserText: "hi"}
	return s, Facts{Repair: tr, AwaitingTurn: "t1", Awaiting: info}
}

func withSession(s state.Session, fn func(*state.Session)) state.Session { fn(&s); return s }

func TestNewPlan_WhyTheOwnerDoesWhatItDoes(t *testing.T) {
	cases := []planCase{
		{name: "resumes when the agent advertises resume and a token is stored", session: waiting(),
			want: planWant{step: acp.RestoreResume}},
		{name: "loads instead of resuming when the agent advertises only load", session: waiting(), caps: &acp.Capabilities{Load: true},
			want: planWant{step: acp.RestoreLoad}},
		{name: "starts a fresh agent session when neither is advertised", session: waiting(), caps: &acp.Capabilities{},
			want: planWant{step: acp.RestoreNew}},
		{name: "starts fresh on the first launch, with nothing to restore", session: state.Session{State: state.StateCreated, InitialPrompt: "hello"}, fresh: true,
			want: planWant{step: acp.RestoreNew, initial: "hello"}},
		{name: "starts fresh when the profile turns native resume off", session: waiting(), profile: acp.Profile{Command: []string{"demo"}},
			want: planWant{step: acp.RestoreNew}},
		{name: "relaunches with the resume flag when the profile has one", session: waiting(), profile: acp.Profile{Command: []string{"demo"}, NativeResume: true, ResumeFlag: []string{"--resume", "{token}"}},
			want: planWant{step: acp.RestoreFlag}},
		{name: "continues an interrupted turn the agent accepted", session: running(), facts: acceptedT2,
			want: planWant{repair: true, follow: FollowContinue, request: "do it", step: acp.RestoreResume}},
		{name: "re-sends a message that never reached the agent instead of continuing", session: running(), facts: unsentT2,
			want: planWant{repair: true, follow: FollowResend, resend: Message{Source: eventlog.SourceQueued, Text: "remember pear"}, step: acp.RestoreResume}},
		{name: "re-sends a detached owner's own prompt (a user turn that served an input) as queued: its followers know the re-send so", session: running(),
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Delivery: PromptNeverSent, Source: eventlog.SourceUser}, AwaitingTurn: "t2",
				Awaiting: TurnInfo{Started: true, SendRecorded: true, Source: eventlog.SourceUser, Queued: true, UserText: "remember pear"}},
			want: planWant{repair: true, follow: FollowResend, resend: Message{Source: eventlog.SourceQueued, Text: "remember pear"}, step: acp.RestoreResume}},
		{name: "re-sends the user's own prompt as the user's", session: running(),
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Delivery: PromptNeverSent, Source: eventlog.SourceUser}, AwaitingTurn: "t2",
				Awaiting: TurnInfo{Started: true, SendRecorded: true, Source: eventlog.SourceUser, UserText: "remember pear"}},
			want: planWant{repair: true, follow: FollowResend, resend: Message{Source: eventlog.SourceUser, Text: "remember pear"}, step: acp.RestoreResume}},
		{name: "continues a sent turn the agent answered nothing to, quoting its request", session: running(),
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Delivery: PromptWasSent}, AwaitingTurn: "t2",
				Awaiting: TurnInfo{Started: true, SendRecorded: true, PromptSent: true, Source: eventlog.SourceUser, UserText: "/sleep 20000"}},
			want: planWant{repair: true, follow: FollowContinue, request: "/sleep 20000", step: acp.RestoreResume}},
		{name: "continues a silent turn an older kandev logged: nothing proves it unsent", session: running(),
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Delivery: PromptUnproven}, AwaitingTurn: "t2",
				Awaiting: TurnInfo{Started: true, Source: eventlog.SourceUser, UserText: "/sleep 20000"}},
			want: planWant{repair: true, follow: FollowContinue, request: "/sleep 20000", step: acp.RestoreResume}},
		{name: "continues a sent first prompt instead of sending it again", session: func() state.Session {
			s, _ := firstTurnCut(TurnInfo{SendRecorded: true, PromptSent: true})
			return s
		}(), facts: func() Facts { _, f := firstTurnCut(TurnInfo{SendRecorded: true, PromptSent: true}); return f }(),
			want: planWant{repair: true, follow: FollowContinue, request: "hi", step: acp.RestoreResume}},
		{name: "sends an unsent first prompt again as its turn's follow-up, within the budget", session: func() state.Session {
			s, _ := firstTurnCut(TurnInfo{SendRecorded: true})
			return s
		}(), facts: func() Facts { _, f := firstTurnCut(TurnInfo{SendRecorded: true}); return f }(),
			want: planWant{repair: true, follow: FollowResend, resend: Message{Source: eventlog.SourceUser, Text: "hi"}, step: acp.RestoreResume}},
		{name: "an unsent first prompt is not sent again once the budget is spent", session: func() state.Session {
			s, _ := firstTurnCut(TurnInfo{SendRecorded: true})
			s.RestartAttempts = []time.Time{planNow.Add(-time.Minute), planNow.Add(-2 * time.Minute), planNow.Add(-3 * time.Minute)}
			return s
		}(), facts: func() Facts { _, f := firstTurnCut(TurnInfo{SendRecorded: true}); return f }(),
			want: planWant{repair: true, pause: state.PauseBudget, refused: true, step: acp.RestoreResume}},
		{name: "sends the first prompt when no turn carried it yet (cut off during the launch)",
			session: withSession(running(), func(s *state.Session) {
				s.InitialPrompt, s.CurrentTurn, s.Turns, s.State = "[redacted] hi", "", 0, state.StateStarting
			}),
			want: planWant{initial: "[redacted] hi", step: acp.RestoreResume}},
		{name: "forgets a first prompt an older kandev kept after sending it",
			session: withSession(waiting(), func(s *state.Session) { s.InitialPrompt = "hi" }),
			facts:   Facts{InitialTurnID: "t1", InitialTurn: TurnInfo{Started: true, Ended: true, Source: eventlog.SourceInitial, UserText: "hi"}},
			want:    planWant{forget: true, step: acp.RestoreResume}},
		{name: "sends a first prompt again whose earlier turn never sent it",
			session: withSession(waiting(), func(s *state.Session) { s.InitialPrompt = "hi" }),
			facts:   Facts{InitialTurnID: "t1", InitialTurn: TurnInfo{Started: true, Ended: true, SendRecorded: true, Source: eventlog.SourceInitial, UserText: "hi"}},
			want:    planWant{initial: "hi", step: acp.RestoreResume}},
		{name: "says so when an unsent message is not sent again because continuation is off", session: running(), facts: unsentT2, noCont: true,
			want: planWant{repair: true, notResent: "remember pear", step: acp.RestoreResume}},
		{name: "pauses an interrupted maintenance turn instead of continuing it", session: running(),
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Accepted: true, Source: eventlog.SourceMaintenance}, AwaitingTurn: "t2",
				Awaiting: TurnInfo{Started: true, Accepted: true, Source: eventlog.SourceMaintenance, UserText: "/compact"}},
			want: planWant{repair: true, pause: state.PauseMaintenance, refused: true, step: acp.RestoreResume}},
		{name: "continues a turn only once", session: withSession(waiting(), func(s *state.Session) {
			s.Interrupted, s.ContinuedTurn = &state.Interruption{Turn: "t1"}, "t1"
		}), want: planWant{step: acp.RestoreResume}},
		{name: "continues a turn a terminated owner closed but whose record write was lost", session: running(),
			facts: Facts{Repair: TurnRepair{ClosedByShutdown: true, Accepted: true}, AwaitingTurn: "t2", Awaiting: TurnInfo{Started: true, Ended: true, Accepted: true}},
			want:  planWant{repair: true, follow: FollowContinue, step: acp.RestoreResume}},
		{name: "pauses when a permission was pending", session: running(),
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Accepted: true, PermissionOpen: true}, AwaitingTurn: "t2", Awaiting: TurnInfo{Accepted: true, PermissionOpen: true}},
			want:  planWant{repair: true, pause: state.PausePermissionPending, refused: true, step: acp.RestoreResume}},
		{name: "a prompt goes ahead despite a pause, and the turn is not continued", session: running(), prompt: "carry on",
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Accepted: true, PermissionOpen: true}},
			want:  planWant{repair: true, pause: state.PausePermissionPending, step: acp.RestoreResume}},
		{name: "the caller's own queued prompt (a detached owner's) lifts a pause as a prompt does", session: running(), queued: true,
			facts: Facts{Repair: TurnRepair{Fixes: repairT2.Fixes, Accepted: true, PermissionOpen: true}},
			want:  planWant{repair: true, pause: state.PausePermissionPending, step: acp.RestoreResume}},
		{name: "pauses when the agent command changed", session: running(), facts: acceptedT2, profile: acp.Profile{Command: []string{"other"}, NativeResume: true},
			want: planWant{repair: true, pause: state.PauseAgentChanged, refused: true, step: acp.RestoreResume}},
		{name: "pauses when a stop is queued in the inbox", session: running(), facts: Facts{Repair: repairT2, StopQueued: true},
			want: planWant{repair: true, pause: state.PauseStopped, refused: true, step: acp.RestoreResume}},
		{name: "pauses when the continuation budget is spent", session: withSession(running(), func(s *state.Session) {
			s.RestartAttempts = []time.Time{planNow.Add(-time.Minute), planNow.Add(-2 * time.Minute), planNow.Add(-3 * time.Minute)}
		}), facts: acceptedT2, want: planWant{repair: true, pause: state.PauseBudget, refused: true, step: acp.RestoreResume}},
		{name: "does not continue with --no-continue", session: running(), facts: acceptedT2, noCont: true,
			want: planWant{repair: true, step: acp.RestoreResume}},
		{name: "refuses a broken worktree even with a prompt", session: waiting(), prompt: "x",
			facts: Facts{Worktree: &worktree.Worktree{Path: "/w", Problem: "the worktree /w is gone"}},
			want:  planWant{refused: true, step: acp.RestoreResume}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.session
			s.ID = "s1"
			if !tc.fresh {
				s.AgentLaunched, s.ResumeToken = true, "tok"
			}
			prof := tc.profile
			if prof.Command == nil {
				prof = acp.Profile{Command: []string{"demo"}, NativeResume: true}
			}
			caps := acp.Capabilities{Resume: true, Load: true}
			if tc.caps != nil {
				caps = *tc.caps
			}
			cfg := &config.Config{}
			p := NewPlan(PlanInput{Session: &s, Facts: tc.facts, Profile: prof, Prompt: tc.prompt, OwnQueued: tc.queued, Now: planNow,
				Policy: ContinuationPolicy(cfg, prof.Command, PermApproveAll, tc.noCont)})
			got := planWant{repair: p.Repair, follow: p.FollowUp, resend: p.Resend, refused: p.Refusal != nil,
				initial: p.Initial, step: p.FirstStep(caps, false), request: p.Request, notResent: p.NotResent, forget: p.ForgetInitial}
			if p.Continuation.Pause != nil {
				got.pause = p.Continuation.Pause.Kind
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			if p.SendPrompt != (tc.prompt != "") {
				t.Fatalf("SendPrompt = %v with prompt %q", p.SendPrompt, tc.prompt)
			}
			if c := p.ContinuationPrompt(false, "s1", 0); p.FollowUp == FollowContinue && (!strings.Contains(c, "interrupted") || p.Request != "" && !strings.Contains(c, "> "+p.Request)) {
				t.Fatalf("continuation prompt: %q", c)
			}
		})
	}
}

func TestPlan_WhenTheResumeContextIsOwedAndCarried(t *testing.T) {
	cases := []struct {
		name        string
		plan        Plan
		step        acp.RestoreMethod
		flagRefused bool
		want        bool
	}{
		{"a fresh agent session replacing one with history owes it", Plan{Turns: 2}, acp.RestoreNew, false, true},
		{"a fresh agent session without history does not", Plan{}, acp.RestoreNew, false, false},
		{"the first launch does not", Plan{FirstLaunch: true, Turns: 0}, acp.RestoreNew, false, false},
		{"resume restores the conversation itself", Plan{Turns: 2}, acp.RestoreResume, false, false},
		{"load restores the conversation itself", Plan{Turns: 2}, acp.RestoreLoad, false, false},
		{"a profile asking for injection gets it after resume", Plan{Turns: 2, HistoryInjection: true}, acp.RestoreResume, false, true},
		{"the resume flag restores the conversation itself", Plan{Turns: 2}, acp.RestoreFlag, false, false},
		{"an agent that refused its resume flag owes it", Plan{Turns: 2}, acp.RestoreNone, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.plan.OwesResumeContext(tc.step, tc.flagRefused); got != tc.want {
				t.Fatalf("OwesResumeContext(%s, %v) = %v", tc.step, tc.flagRefused, got)
			}
		})
	}
	carried := []struct {
		name           string
		pending        bool
		source, parent string
		want           bool
	}{
		{"the next user prompt carries the pending context", true, eventlog.SourceUser, "", true},
		{"a continuation carries it too", true, eventlog.SourceContinuation, "", true},
		{"an initial prompt does not carry the session's own", true, eventlog.SourceInitial, "", false},
		{"an initial prompt of a follow-up carries its parent's", true, eventlog.SourceInitial, "p1", true},
		{"nothing is carried when nothing is pending", false, eventlog.SourceUser, "", false},
		{"a maintenance turn never spends it", true, eventlog.SourceMaintenance, "", false},
		{"nor does a follow-up's maintenance turn", true, eventlog.SourceMaintenance, "p1", false},
	}
	for _, tc := range carried {
		t.Run(tc.name, func(t *testing.T) {
			if got := shouldInjectResumeContext(tc.pending, tc.source, tc.parent); got != tc.want {
				t.Fatalf("got %v", got)
			}
		})
	}
}

func TestPlan_TheLadderFollowsARefusedResumeFlag(t *testing.T) {
	p := NewPlan(PlanInput{Session: &state.Session{ID: "s1", AgentLaunched: true, ResumeToken: "tok", Turns: 1},
		Profile: acp.Profile{Command: []string{"x"}, NativeResume: true, ResumeFlag: []string{"--resume={token}"}}, Now: planNow,
		Policy: ContinuationPolicy(&config.Config{}, []string{"x"}, PermAsk, false)})
	if got := p.FirstStep(acp.Capabilities{Load: true}, true); got != acp.RestoreLoad {
		t.Fatalf("after a refused flag: %s, want load", got)
	}
}

func TestDecideDelivery_OnlyALogThatRecordsSendsCanProveAMessageUnsent(t *testing.T) {
	cases := []struct {
		name string
		info TurnInfo
		want PromptDelivery
	}{
		{"prompt_sent in the log: sent, though the agent said nothing", TurnInfo{Started: true, SendRecorded: true, PromptSent: true}, PromptWasSent},
		{"prompt_sent and an answer: sent", TurnInfo{Started: true, SendRecorded: true, PromptSent: true, Accepted: true}, PromptWasSent},
		{"an owner that records sends, and no prompt_sent: never sent", TurnInfo{Started: true, SendRecorded: true}, PromptNeverSent},
		{"an older kandev's turn the agent answered: unproven, so sent", TurnInfo{Started: true, Accepted: true}, PromptUnproven},
		{"an older kandev's silent turn: unproven, so sent", TurnInfo{Started: true}, PromptUnproven},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideDelivery(tc.info)
			if got != tc.want {
				t.Fatalf("DecideDelivery = %s, want %s", got, tc.want)
			}
			tc.info.UserText = "x"
			if f, _ := followUp(tc.info); (f == FollowResend) != (tc.want == PromptNeverSent) {
				t.Fatalf("follow-up %s for a %s prompt", f, got)
			}
		})
	}
}

func TestRequestHeld_OnlyALoadReplayThatContainsTheRequestShowsIt(t *testing.T) {
	cases := []struct {
		name     string
		step     acp.RestoreMethod
		replayed []string
		request  string
		want     bool
	}{
		{"a load whose replay has the request", acp.RestoreLoad, []string{"hello", "/sleep 20000"}, "/sleep 20000", true},
		{"a load whose replay has it inside the resume context it was sent with", acp.RestoreLoad, []string{"RESUME CONTEXT ...\n/sleep 20000\n..."}, " /sleep 20000\n", true},
		{"a load whose replay lacks it (the agent never saved it)", acp.RestoreLoad, []string{"hello"}, "/sleep 20000", false},
		{"a resume replays nothing, whatever the agent kept", acp.RestoreResume, nil, "/sleep 20000", false},
		{"a fresh session holds nothing", acp.RestoreNew, []string{"/sleep 20000"}, "/sleep 20000", false},
		{"a resume flag shows nothing", acp.RestoreFlag, nil, "x", false},
		{"an empty request needs no quote either way", acp.RestoreLoad, []string{"x"}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequestHeld(tc.step, tc.replayed, tc.request); got != tc.want {
				t.Fatalf("RequestHeld = %v", got)
			}
		})
	}
}
