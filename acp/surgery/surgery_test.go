package surgery

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

func TestChooseForkMethod_NativeOnlyForTheWholeConversationOfAnIdleAgentSession(t *testing.T) {
	native := ForkFacts{Advertised: true, ParentToken: "tok", AtEnd: true, NativeAllow: true}
	cases := []struct {
		name string
		mod  func(*ForkFacts)
		want string
	}{
		{"advertised, at the end, idle", func(*ForkFacts) {}, ForkNative},
		{"not advertised", func(f *ForkFacts) { f.Advertised = false }, ForkReplay},
		{"an earlier turn", func(f *ForkFacts) { f.AtEnd = false }, ForkReplay},
		{"the parent has no agent session", func(f *ForkFacts) { f.ParentToken = "" }, ForkReplay},
		{"a parent turn is running", func(f *ForkFacts) { f.ParentTurn = "t3" }, ForkReplay},
		{"a kandev process has the parent's agent open", func(f *ForkFacts) { f.ParentLive = true }, ForkReplay},
		{"the profile turns native sessions off", func(f *ForkFacts) { f.NativeAllow = false }, ForkReplay},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := native
			c.mod(&f)
			if got := ChooseForkMethod(f); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

// surgeryHome is a home with session s1: three turns that remember ALPHA,
// BETA and GAMMA.
func surgeryHome(t *testing.T) (*state.Home, []int64) {
	t.Helper()
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := h.CreateSession(&state.Session{ID: "s1", State: state.StateWaitingForInput, AgentLaunched: true, ResumeToken: "tok", Turns: 3, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	log, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	var ends []int64
	for i, w := range []string{"ALPHA", "BETA", "GAMMA"} {
		turn := "t" + string(rune('1'+i))
		end := &eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turn}
		if err := log.Append(&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: turn, Source: eventlog.SourceUser},
			&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: turn, Content: "remember " + w},
			&eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: turn, Content: "OK, I will remember " + w + "."}, end); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, end.Seq)
	}
	return h, ends
}

func TestRewind_AFenceLeftPendingByACrashIsAppendedOnceByTheNextCommand(t *testing.T) {
	for _, logged := range []bool{false, true} {
		name := map[bool]string{false: "killed before the fence was logged", true: "killed after the fence was logged"}[logged]
		t.Run(name, func(t *testing.T) {
			h, ends := surgeryHome(t)
			r := eventlog.Rewind{Epoch: 1, ToSeq: ends[0]}
			if _, err := h.UpdateSession("s1", func(s *state.Session) error { s.BeginRewind(r); return nil }); err != nil {
				t.Fatal(err)
			}
			if logged {
				log, _, _ := h.OpenLog("s1", eventlog.OpenLogOptions{})
				if err := log.AppendSync(r.Event()); err != nil {
					t.Fatal(err)
				}
				log.Close()
			}
			for range 2 { // the next command, and one more
				if _, err := Repair(h, "s1", eventlog.StopShutdown, false); err != nil {
					t.Fatal(err)
				}
			}
			evs, _, _ := eventlog.ReadAll(h.LogPath("s1"))
			var said []string
			for _, e := range history.CurrentEpoch(evs) {
				if e.Type == eventlog.EventUserMessage {
					said = append(said, e.Content)
				}
			}
			if !slices.Equal(said, []string{"remember ALPHA"}) {
				t.Fatalf("the current epoch says %q, want the first turn only", said)
			}
			var fences []int
			for _, e := range evs {
				if e.Type == eventlog.EventRewind {
					fences = append(fences, e.Epoch)
				}
			}
			s, _ := h.LoadSession("s1")
			if !slices.Equal(fences, []int{1}) || s.RewindPending != nil || s.Epoch != 1 || s.ResumeToken != "" {
				t.Fatalf("fences %v, record pending %+v epoch %d token %q", fences, s.RewindPending, s.Epoch, s.ResumeToken)
			}
		})
	}
}

func TestAdvertisedCommands_TheNewestAdvertisementWins(t *testing.T) {
	h, _ := surgeryHome(t)
	if got := AdvertisedCommands(h.LogPath("s1")); got != nil || CompactionCommand(got) != "" {
		t.Fatalf("no advertisement: %v", got)
	}
	log, _, _ := h.OpenLog("s1", eventlog.OpenLogOptions{})
	defer log.Close()
	adv := func(names ...string) *eventlog.Event {
		var parts []string
		for _, n := range names {
			parts = append(parts, `{"name":"`+n+`","description":"d"}`)
		}
		return &eventlog.Event{Type: eventlog.EventAgentUpdate, Data: []byte(`{"sessionUpdate":"available_commands_update","availableCommands":[` + strings.Join(parts, ",") + `]}`)}
	}
	log.Append(adv("compact", "review"))
	if got := AdvertisedCommands(h.LogPath("s1")); !slices.Equal(got, []string{"compact", "review"}) || CompactionCommand(got) != "compact" {
		t.Fatalf("got %v", got)
	}
	log.Append(adv("review"))
	if got := AdvertisedCommands(h.LogPath("s1")); !slices.Equal(got, []string{"review"}) || CompactionCommand(got) != "" {
		t.Fatalf("after a newer advertisement without compact: %v", got)
	}
}

func TestResumeContextFor_CarriesTheCurrentEpochOnly(t *testing.T) {
	for _, max := range []int{history.DefaultMaxReplayBytes, 900} { // the whole log, and a window from its end
		h, ends := surgeryHome(t)
		if _, err := Rewind(h, "s1", ends[1]); err != nil {
			t.Fatal(err)
		}
		s, _ := h.LoadSession("s1")
		got := owner.ResumeContextFor(h, s, "recall", max)
		if !strings.Contains(got, "remember BETA") || strings.Contains(got, "GAMMA") || !strings.Contains(got, "remember ALPHA") {
			t.Fatalf("max %d: context must hold ALPHA and BETA, not GAMMA:\n%s", max, got)
		}
		if _, err := Rewind(h, "s1", 0); err != nil {
			t.Fatal(err)
		}
		s, _ = h.LoadSession("s1")
		if got := owner.ResumeContextFor(h, s, "recall", max); got != "recall" {
			t.Fatalf("max %d: after a clear the prompt goes alone, got:\n%s", max, got)
		}
	}
}
