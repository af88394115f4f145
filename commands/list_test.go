package commands

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/testlog"
	"github.com/kandev/kandev/state"
)

// list --state and --resumable show exactly the sessions in the states they
// name: the listing leaves the others out while it reads the records.
func TestList_StateAndResumableShowOnlyTheirSessions(t *testing.T) {
	home := t.TempDir()
	if _, err := state.OpenHome(home); err != nil {
		t.Fatal(err)
	}
	states := []string{state.StateWaitingForInput, state.StateCompleted, state.StateCancelled, state.StateWaitingForInput, state.StateFailed}
	testlog.WriteHome(t, home, 10, testlog.Home{State: func(i int) string { return states[i%len(states)] }})
	list := func(args ...string) (states []string) {
		t.Helper()
		var out bytes.Buffer
		if code := Run(append([]string{"--home", home, "--json", "list"}, args...), strings.NewReader(""), &out, &bytes.Buffer{}); code != 0 {
			t.Fatalf("list %v: exit %d", args, code)
		}
		var got struct {
			Sessions []struct {
				State string `json:"state"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		for _, s := range got.Sessions {
			states = append(states, s.State)
		}
		return states
	}
	count := func(ss []string, want string) int {
		n := 0
		for _, s := range ss {
			if s == want {
				n++
			}
		}
		return n
	}
	if got := list("--state", "completed"); len(got) != 2 || count(got, state.StateCompleted) != 2 {
		t.Errorf("--state completed: %v", got)
	}
	if got := list("--resumable"); len(got) != 4 || count(got, state.StateWaitingForInput) != 4 {
		t.Errorf("--resumable: %v", got)
	}
	if got := list("--resumable", "--state", "CANCELLED"); len(got) != 0 {
		t.Errorf("--resumable --state CANCELLED: %v", got)
	}
	if got := list(); len(got) != 10 {
		t.Errorf("every session: %v", got)
	}
	if code := Run([]string{"--home", home, "list", "--state", "DONE"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != ExitUsage {
		t.Errorf("--state DONE: exit %d, want %d", code, ExitUsage)
	}
}

func TestList_BadgeCellNamesWhatIsWarm(t *testing.T) {
	at := time.Date(2026, 12, 7, 14, 5, 9, 0, time.Local)
	cases := []struct {
		badge string
		until *time.Time
		want  string
	}{
		{"idle", &at, "idle (warm until 14:05:09)"},
		{"stopped", &at, "stopped (agent warm until 14:05:09)"},
		{"idle", nil, "idle"},
		{"running", nil, "running"},
	}
	for _, c := range cases {
		if got := badgeCell(c.badge, c.until); got != c.want {
			t.Errorf("badgeCell(%q) = %q, want %q", c.badge, got, c.want)
		}
	}
	for st, want := range map[string]bool{state.StateRunning: true, state.StateStarting: true, state.StateWaitingForInput: false, state.StateCreated: false} {
		if got := turnOpen(&state.Session{State: st}); got != want {
			t.Errorf("turnOpen(%s) = %v, want %v", st, got, want)
		}
	}
}
