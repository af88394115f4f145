package e2e_test

import (
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// A prompt's own turn is the user's wherever its owner runs: in the command
// (--linger 0) or in the detached owner that command starts for it (the
// default). Only a prompt that joined another process's live owner went
// through that owner's inbox ("queued").
func TestReach_APromptsOwnTurnIsTheUsersInTheOwnerItStarts(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		name  string
		flags []string
	}{
		{"owner in this command", []string{"--linger", "0"}},
		{"detached owner this command starts", nil},
	} {
		t.Run(row.name, func(t *testing.T) {
			w := newWorld(t)
			id, r := w.start("--linger", "0") // no owner left: the prompt's command starts one
			if r.code != 0 {
				t.Fatal(r)
			}
			w.closeOnCleanup(id)
			w.mustRun(append(append([]string{"prompt"}, row.flags...), id, "/say mine")...)
			evs := w.events(id)
			turn := lastTurn(evs)
			for _, e := range ofType(evs, eventlog.EventTurnStarted) {
				if e.TurnID == turn && e.Source != eventlog.SourceUser {
					t.Fatalf("the prompt's turn %s started with source %q (input %s), want %q", turn, e.Source, e.InputID, eventlog.SourceUser)
				}
			}
			var page struct {
				Entries []struct {
					Message struct {
						Role   string `json:"role"`
						Source string `json:"source"`
						Parts  []struct {
							Text string `json:"text"`
						} `json:"parts"`
					} `json:"message"`
				} `json:"entries"`
			}
			decodeJSON(t, w.mustRun("--json", "transcript", id).stdout, &page)
			found := false
			for _, en := range page.Entries {
				m := en.Message
				if m.Role == "user" && len(m.Parts) > 0 && m.Parts[0].Text == "/say mine" {
					found = true
					if m.Source != "" {
						t.Fatalf("the transcript shows the prompt as %q, want the user's own message (no source)", m.Source)
					}
				}
			}
			if !found {
				t.Fatalf("the transcript has no user message /say mine: %+v", page.Entries)
			}
		})
	}
}
