package commands

import (
	"strings"
	"testing"
	"time"
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
