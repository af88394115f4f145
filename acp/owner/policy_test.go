package owner

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
)

func TestDecidePermission_Modes(t *testing.T) {
	opts := []sdk.PermissionOption{
		{OptionId: "allow", Kind: sdk.PermissionOptionKindAllowOnce},
		{OptionId: "always", Kind: sdk.PermissionOptionKindAllowAlways},
		{OptionId: "reject", Kind: sdk.PermissionOptionKindRejectOnce},
	}
	cases := []struct {
		mode    string
		kind    sdk.ToolKind
		options []sdk.PermissionOption
		want    string
		allowed bool
	}{
		{PermApproveAll, sdk.ToolKindEdit, opts, "allow", true},
		{PermDenyAll, sdk.ToolKindRead, opts, "reject", false},
		{PermApproveReads, sdk.ToolKindRead, opts, "allow", true},
		{PermApproveReads, sdk.ToolKindEdit, opts, "reject", false},
		{PermApproveReads, sdk.ToolKindExecute, opts, "reject", false},
		{PermApproveAll, sdk.ToolKindEdit, opts[1:2], "always", true},
		{PermDefer, sdk.ToolKindRead, opts, "allow", true},
		{permApproveAlways, sdk.ToolKindEdit, opts, "always", true},
		{permApproveAlways, sdk.ToolKindEdit, opts[:1], "allow", true},
		{PermDenyAll, sdk.ToolKindEdit, opts[:2], "", false}, // no reject option: cancelled
	}
	for _, tc := range cases {
		got, allowed := DecidePermission(tc.mode, tc.kind, tc.options)
		if got != tc.want || allowed != tc.allowed {
			t.Errorf("%s/%s: got %q %v, want %q %v", tc.mode, tc.kind, got, allowed, tc.want, tc.allowed)
		}
	}
}

func TestChosenOption_TheAgentGetsTheOptionAPersonChose(t *testing.T) {
	opts := []sdk.PermissionOption{
		{OptionId: "allow", Kind: sdk.PermissionOptionKindAllowOnce},
		{OptionId: "allow_always", Kind: sdk.PermissionOptionKindAllowAlways},
		{OptionId: "reject_always", Kind: sdk.PermissionOptionKindRejectAlways},
	}
	cases := []struct {
		chosen  string
		ok      bool
		allowed bool
	}{
		{"allow_always", true, true},
		{"allow", true, true},
		{"reject_always", true, false},
		{"", false, false},               // no choice: the mode decides (a denial)
		{"something-else", false, false}, // never offered: not passed on
	}
	for _, tc := range cases {
		id, ok := ChosenOption(opts, tc.chosen)
		if ok != tc.ok || (ok && (id != tc.chosen || isAllow(opts, id) != tc.allowed)) {
			t.Errorf("%q: got %q %v (allowed %v)", tc.chosen, id, ok, isAllow(opts, id))
		}
	}
}

func TestRepairTurn_AppendsUnknownResultsOnceAndNothingForAnEndedTurn(t *testing.T) {
	evs := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventTurnStarted, TurnID: "t1"},
		{Seq: 2, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c1", ToolName: "Read a"},
		{Seq: 3, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c2", ToolName: "Write b"},
		{Seq: 4, Type: eventlog.EventToolCall, TurnID: "t1", ToolCallID: "c2", ToolName: "Write b", ToolStatus: "in_progress"},
		{Seq: 5, Type: eventlog.EventToolResult, TurnID: "t1", ToolCallID: "c1", ToolStatus: "completed"},
	}
	tr := RepairTurn(evs, "t1", eventlog.StopShutdown)
	if len(tr.UnknownCalls) != 1 || tr.UnknownCalls[0].ToolCallID != "c2" || !tr.Accepted {
		t.Fatalf("repair %+v", tr)
	}
	fixes := tr.Fixes
	if len(fixes) != 3 || fixes[0].ToolStatus != "unknown" || fixes[1].StopReason != "shutdown" || fixes[2].Type != eventlog.EventMarker {
		t.Fatalf("fixes %+v", fixes)
	}
	var all []eventlog.Event
	all = append(all, evs...)
	for _, f := range fixes {
		all = append(all, *f)
	}
	if again := RepairTurn(all, "t1", eventlog.StopShutdown); again.Fixes != nil {
		t.Fatalf("second repair: %+v", again)
	}
}

func TestRepairTurn_SeesUnacceptedTurnsOpenPermissionsAndTurnsThatNeverStarted(t *testing.T) {
	unaccepted := []eventlog.Event{
		{Seq: 1, Type: eventlog.EventTurnStarted, TurnID: "t2", Source: "queued"},
		{Seq: 2, Type: eventlog.EventUserMessage, TurnID: "t2", Content: "do the thing"},
		{Seq: 3, Type: eventlog.EventState, TurnID: "t2", State: "RUNNING"},
	}
	if tr := RepairTurn(unaccepted, "t2", eventlog.StopShutdown); tr.Accepted || tr.UserText != "do the thing" || tr.Source != "queued" || tr.Fixes == nil {
		t.Fatalf("unaccepted: %+v", tr)
	}
	open := append(unaccepted[:3:3],
		eventlog.Event{Seq: 4, Type: eventlog.EventToolCall, TurnID: "t2", ToolCallID: "w"},
		eventlog.Event{Seq: 5, Type: eventlog.EventPermissionRequest, TurnID: "t2", ToolCallID: "w"})
	if tr := RepairTurn(open, "t2", eventlog.StopShutdown); !tr.PermissionOpen || !tr.Accepted {
		t.Fatalf("open permission: %+v", tr)
	}
	answered := append(open[:5:5], eventlog.Event{Seq: 6, Type: eventlog.EventPermissionResolved, TurnID: "t2", ToolCallID: "w"})
	if tr := RepairTurn(answered, "t2", eventlog.StopShutdown); tr.PermissionOpen {
		t.Fatalf("answered permission still open: %+v", tr)
	}
	if tr := RepairTurn(unaccepted, "t3", eventlog.StopShutdown); tr.Fixes != nil {
		t.Fatalf("a turn that never started was repaired: %+v", tr)
	}
}

func TestTerminalAllowed_ByModeAndAnAllowedRequestInTheTurn(t *testing.T) {
	for _, c := range []struct {
		mode    string
		allowed bool
		ok      bool
	}{
		{PermApproveAll, false, true},
		{PermDenyAll, true, false},
		{PermAsk, false, false},
		{PermAsk, true, true},
		{PermDefer, true, true},
		{PermDefer, false, false},
		{PermApproveReads, false, false},
	} {
		if err := TerminalAllowed(c.mode, c.allowed); (err == nil) != c.ok {
			t.Errorf("%s, allowed in turn %v: %v", c.mode, c.allowed, err)
		}
	}
}
