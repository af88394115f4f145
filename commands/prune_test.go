package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/prune"
	"github.com/kandev/kandev/state"
)

func TestParseAge_AcceptsDaysAndGoDurations(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, true},
		{"720h", 720 * time.Hour, true},
		{"30d", 30 * day, true},
		{"1d12h", day + 12*time.Hour, true},
		{"0.5d", 12 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"d", 0, false},
		{"-3d", 0, false},
		{"-1h", 0, false},
		{"30 days", 0, false},
		{"thirty", 0, false},
	}
	for _, tc := range cases {
		got, err := parseAge("--older-than", tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseAge(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && ExitCode(err) != ExitUsage {
			t.Errorf("parseAge(%q): exit %d, want usage", tc.in, ExitCode(err))
		}
	}
}

func TestPruneState_OnlyTerminalStates(t *testing.T) {
	for in, want := range map[string]string{"completed": "COMPLETED", "FAILED": "FAILED", "cancelled": "CANCELLED", "done": "COMPLETED", "archived": "CANCELLED", "": ""} {
		if got, err := pruneState(in); err != nil || got != want {
			t.Errorf("pruneState(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"RUNNING", "WAITING_FOR_INPUT", "idle"} {
		if _, err := pruneState(in); ExitCode(err) != ExitUsage {
			t.Errorf("pruneState(%q) should be a usage error, got %v", in, err)
		}
	}
}

func TestWorktreeKept_NamesTheFilesOnlyTheWorktreeHolds(t *testing.T) {
	cases := []struct {
		lines []string
		want  string
	}{
		{[]string{"!! .env"}, "has 1 uncommitted, untracked or ignored file(s) (.env)"},
		{[]string{" M main.go", "?? notes.txt", "!! build/"}, "has 3 uncommitted, untracked or ignored file(s) (main.go, notes.txt, build/)"},
		{[]string{"?? a", "?? b", "?? c", "?? d", "?? e"}, "has 5 uncommitted, untracked or ignored file(s) (a, b, c, ...)"},
	}
	for _, tc := range cases {
		got := worktreeKept("/src/app-kandev-1a2b", tc.lines)
		if !strings.Contains(got, "its worktree /src/app-kandev-1a2b "+tc.want) || strings.Contains(got, "\n") {
			t.Errorf("worktreeKept(%q) = %q, want it to say %q", tc.lines, got, tc.want)
		}
	}
}

// A check made while deleting (here another holder's live lease on the
// child) keeps a session the plan meant to delete: the plan is made again,
// so the parent that waited for it stays too, in a dry run and a real one.
func TestPruneCarryOut_APlannedSessionKeptByACheckKeepsItsParent(t *testing.T) {
	for _, dryRun := range []bool{true, false} {
		h, err := state.OpenHome(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		parent := &state.Session{ID: "parent", State: state.StateCompleted, LastActivityAt: now}
		kid := &state.Session{ID: "kid", ParentID: "parent", State: state.StateCompleted, LastActivityAt: now}
		other := &state.Session{ID: "other", State: state.StateCompleted, LastActivityAt: now}
		for _, s := range []*state.Session{parent, kid, other} {
			if err := h.CreateSession(s); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.Attach("kid", "someone-else", time.Hour, now); err != nil {
			t.Fatal(err)
		}
		all, err := h.ListSessions()
		if err != nil {
			t.Fatal(err)
		}
		c := &pruneCmd{DryRun: dryRun}
		res, err := c.carryOut(h, prune.Facts{Sessions: all, Now: now, Kept: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.pruned, " ") != "other" {
			t.Errorf("dry run %v: pruned %q, want only other", dryRun, res.pruned)
		}
		if !strings.HasPrefix(res.kept["kid"], "attached to someone-else") || !strings.HasPrefix(res.kept["parent"], "session kid was started from it") {
			t.Errorf("dry run %v: kept %q, want kid (its lease) and parent (kid reads it)", dryRun, res.kept)
		}
		for _, id := range []string{"parent", "kid"} {
			if _, err := h.LoadSession(id); err != nil {
				t.Errorf("dry run %v: %s was deleted: %v", dryRun, id, err)
			}
		}
	}
}
