package agentswitch

import (
	"errors"
	"strings"
	"testing"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/state"
)

func TestDecide(t *testing.T) {
	agents := []Agent{{"demo", true}, {"plain", true}, {"claude", false}}
	idle := state.StateWaitingForInput
	for _, tc := range []struct {
		name string
		f    Facts
		want Verdict
	}{
		{"an idle session moves to another installed agent", Facts{From: "demo", To: "plain", State: idle}, Go},
		{"a session that never ran a turn moves too", Facts{From: "demo", To: "plain", State: state.StateCreated}, Go},
		{"an agent with no profile is refused", Facts{From: "demo", To: "nosuch", State: idle}, Unknown},
		{"an agent that is not installed is refused", Facts{From: "demo", To: "claude", State: idle}, NotInstalled},
		{"the unknown agent is refused before a running turn is", Facts{From: "demo", To: "nosuch", State: state.StateRunning, Running: true}, Unknown},
		{"a running turn refuses the switch", Facts{From: "demo", To: "plain", State: state.StateRunning, Running: true}, Busy},
		{"the agent it runs already changes nothing", Facts{From: "demo", To: "demo", State: idle}, Same},
		{"the agent it runs already changes nothing, even mid-turn", Facts{From: "demo", To: "demo", State: state.StateRunning, Running: true}, Same},
		{"the agent it runs, uninstalled since, changes nothing", Facts{From: "claude", To: "claude", State: idle}, Same},
		{"a finished session is refused", Facts{From: "demo", To: "plain", State: state.StateCompleted}, Finished},
		{"a failed session is refused", Facts{From: "demo", To: "plain", State: state.StateFailed}, Finished},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Agents, tc.f.SessionID = agents, "s1"
			if got := Decide(tc.f); got != tc.want {
				t.Fatalf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRefusal_SaysWhatToDoWithTheRightKind(t *testing.T) {
	agents := []Agent{{"demo", true}, {"plain", true}, {"claude", false}}
	f := Facts{SessionID: "s1", From: "demo", Agents: agents, State: state.StateWaitingForInput}
	for _, tc := range []struct {
		v    Verdict
		to   string
		kind error
		says []string
	}{
		{Unknown, "nosuch", ErrBadAgent, []string{`"nosuch"`, "demo, plain"}},
		{NotInstalled, "claude", ErrBadAgent, []string{"claude is not installed", "demo, plain"}},
		{Busy, "plain", state.ErrOwnerBusy, []string{"kandev cancel s1", "wait"}},
		{Finished, "plain", owner.ErrNotResumable, []string{"kandev start --parent s1 --agent plain"}},
	} {
		f.To = tc.to
		err := Refusal(f, tc.v)
		if !errors.Is(err, tc.kind) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: %v is not one line of the right kind", tc.v, err)
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Fatalf("%s: %q does not say %q", tc.v, err, s)
			}
		}
	}
	if Refusal(f, Go) != nil || Refusal(f, Same) != nil {
		t.Fatal("Go and Same are no refusals")
	}
}
