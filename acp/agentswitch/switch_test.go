package agentswitch

import (
	"context"
	"testing"
	"time"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// switchHome is a home with session s1 on the demo agent: one turn, an
// agent session of its own, and a config with a second agent "plain".
func switchHome(t *testing.T) (*state.Home, *config.Config) {
	t.Helper()
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	s := &state.Session{ID: "s1", Agent: "demo", State: state.StateWaitingForInput, AgentLaunched: true, ResumeToken: "tok", Turns: 1, CreatedAt: now,
		Capabilities: []byte(`{"agentCapabilities":{}}`), Setup: &state.Setup{Model: "demo-large"}}
	if err := h.CreateSession(s); err != nil {
		t.Fatal(err)
	}
	log, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := log.AppendSync(&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: "t1"},
		&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: "t1", Role: "user", Content: "remember APPLE"},
		&eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: "end_turn"}); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{}
	cfg.Agents = map[string]config.AgentProfile{"plain": {Command: []string{"{kandev}", "demo-agent", "--no-resume"}}}
	return h, cfg
}

func switched(t *testing.T, h *state.Home) []eventlog.Event {
	t.Helper()
	evs, _, err := eventlog.ReadAll(h.LogPath("s1"))
	if err != nil {
		t.Fatal(err)
	}
	var out []eventlog.Event
	for _, e := range evs {
		if e.Type == eventlog.EventAgentSwitched || e.Type == eventlog.EventMarker && e.Kind == string(history.MarkerAgentSwitched) {
			out = append(out, e)
		}
	}
	return out
}

func TestSwitch_RecordsTheNewAgentAndDropsTheOldAgentsSession(t *testing.T) {
	h, cfg := switchHome(t)
	rep, err := Switch(context.Background(), Request{Home: h, Config: cfg, SessionID: "s1", To: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Switched || rep.From != "demo" || rep.To != "plain" || rep.Setup == nil || rep.Setup.Model != "demo-large" {
		t.Fatalf("report %+v", rep)
	}
	s, _ := h.LoadSession("s1")
	if s.Agent != "plain" || s.ResumeToken != "" || s.Capabilities != nil || !s.PendingContext || !s.AgentNew || s.SwitchPending != nil || s.Setup.Model != "demo-large" {
		t.Fatalf("record after the switch: %+v", s)
	}
	evs := switched(t, h)
	if len(evs) != 2 || evs[0].From != "demo" || evs[0].To != "plain" || evs[1].Type != eventlog.EventMarker {
		t.Fatalf("log after the switch: %+v", evs)
	}
}

// A crash after the record and before the event: the record names the new
// agent with the switch pending; whoever owns the session next writes the
// event once, and once only however often it is asked.
func TestFinishSwitch_WritesTheEventOfAPendingSwitchOnce(t *testing.T) {
	h, _ := switchHome(t)
	s, err := h.UpdateSession("s1", func(s *state.Session) error { s.BeginSwitch("plain"); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if s.Agent != "plain" || s.SwitchPending == nil {
		t.Fatalf("record %+v", s)
	}
	log, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for range 2 {
		if err := owner.FinishSwitch(h, log, s); err != nil {
			t.Fatal(err)
		}
	}
	// A record whose clear was lost after the event was written: not again.
	if s, err = h.UpdateSession("s1", func(s *state.Session) error {
		s.SwitchPending = &state.AgentSwitch{From: "demo", To: "plain"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := owner.FinishPending(h, log, s); err != nil {
		t.Fatal(err)
	}
	if evs := switched(t, h); len(evs) != 2 {
		t.Fatalf("%d switch lines, want the event and its marker once", len(evs))
	}
	if s, _ := h.LoadSession("s1"); s.SwitchPending != nil {
		t.Fatal("the pending switch was not cleared")
	}
}

func TestSwitch_ToTheAgentItRunsChangesNothing(t *testing.T) {
	h, cfg := switchHome(t)
	if v, err := Check(h, cfg, "s1", "demo"); v != Same || err != nil {
		t.Fatalf("Check = %s, %v", v, err)
	}
	rep, err := Switch(context.Background(), Request{Home: h, Config: cfg, SessionID: "s1", To: "demo"})
	if err != nil || rep.Switched {
		t.Fatalf("switch to the same agent: %+v, %v", rep, err)
	}
	if s, _ := h.LoadSession("s1"); s.ResumeToken != "tok" || len(switched(t, h)) != 0 {
		t.Fatal("a switch to the same agent changed the session")
	}
}
