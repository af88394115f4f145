package editor

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func started(turn, source string) eventlog.Event {
	return eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: turn, Source: source}
}

func ended(turn, stop string) eventlog.Event {
	return eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: stop}
}

// handOver in a row marks where the editor hands its prompt over.
var handOverHere = eventlog.Event{Type: "hand-over"}

func TestTurnClaim_AnswersOnlyTheTurnThatCarriesTheEditorsPrompt(t *testing.T) {
	cases := []struct {
		name   string
		events []eventlog.Event
		want   []string // stop reasons answered, in order
	}{
		{"a plain turn answers its prompt",
			[]eventlog.Event{handOverHere, started("t1", eventlog.SourceUser), ended("t1", "end_turn")},
			[]string{"end_turn"}},
		{"a re-sent user turn before the hand-over is not the editor's",
			[]eventlog.Event{started("t2", eventlog.SourceUser), ended("t2", "end_turn"),
				handOverHere, started("t3", eventlog.SourceUser), ended("t3", "cancelled")},
			[]string{"cancelled"}},
		{"a continuation before the hand-over is not the editor's",
			[]eventlog.Event{started("t2", eventlog.SourceContinuation), ended("t2", "end_turn"),
				handOverHere, started("t3", eventlog.SourceUser), ended("t3", "max_tokens")},
			[]string{"max_tokens"}},
		{"another process's queued input served while the prompt waits is not the editor's",
			[]eventlog.Event{handOverHere, started("t4", eventlog.SourceQueued), ended("t4", "refusal"),
				started("t5", eventlog.SourceUser), ended("t5", "end_turn")},
			[]string{"end_turn"}},
		{"an initial prompt and a maintenance turn are never the editor's",
			[]eventlog.Event{handOverHere, started("t1", eventlog.SourceInitial), ended("t1", "end_turn"),
				started("t2", eventlog.SourceMaintenance), ended("t2", "end_turn"),
				started("t3", eventlog.SourceUser), ended("t3", "cancelled")},
			[]string{"cancelled"}},
		{"each prompt gets its own turn's answer, one behind never",
			[]eventlog.Event{started("t2", eventlog.SourceUser), ended("t2", "end_turn"),
				handOverHere, started("t3", eventlog.SourceUser), ended("t3", "cancelled"),
				handOverHere, started("t4", eventlog.SourceUser), ended("t4", "end_turn")},
			[]string{"cancelled", "end_turn"}},
		{"a turn that ends without a hand-over answers nothing",
			[]eventlog.Event{started("t1", eventlog.SourceUser), ended("t1", "end_turn")},
			nil},
		{"the end of another turn while the editor's runs answers nothing",
			[]eventlog.Event{handOverHere, started("t2", eventlog.SourceUser), ended("t1", "end_turn"), ended("t2", "refusal")},
			[]string{"refusal"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var claim turnClaim
			var got []string
			for _, e := range c.events {
				if e.Type == handOverHere.Type {
					claim.handOver()
					continue
				}
				if stop, ok := claim.see(e); ok {
					got = append(got, stop)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("answered %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("answered %q, want %q", got, c.want)
				}
			}
		})
	}
}

func TestTurnClaim_AWithdrawnHandOverClaimsNoLaterTurn(t *testing.T) {
	var claim turnClaim
	claim.handOver()
	claim.withdraw()
	claim.see(started("t1", eventlog.SourceUser))
	if _, ok := claim.see(ended("t1", "end_turn")); ok || claim.running() {
		t.Fatal("a withdrawn hand-over claimed the next user turn")
	}
}

func TestLastUserTurn_IsThePromptOfARunAfterItsReSendAndBeforeQueuedInputs(t *testing.T) {
	var l lastUserTurn
	for _, e := range []eventlog.Event{
		started("t2", eventlog.SourceUser), ended("t2", "refusal"), // the re-send of the interrupted turn
		started("t3", eventlog.SourceUser), ended("t3", "end_turn"), // the prompt
		started("t4", eventlog.SourceQueued), ended("t4", "cancelled"), // another process's input
	} {
		l.see(e)
	}
	if l.turn != "t3" || l.stop != "end_turn" {
		t.Fatalf("picked %s ending %q, want t3 ending end_turn", l.turn, l.stop)
	}
}
