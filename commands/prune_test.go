package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/worktree"
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

func TestParentKept_APrunedParentWaitsForEverySessionStartedFromIt(t *testing.T) {
	all := []*state.Session{
		{ID: "parent"}, {ID: "child-a", ParentID: "parent"}, {ID: "child-b", ParentID: "parent"},
		{ID: "fork", ParentID: "parent", ForkedAt: 9}, {ID: "lonely"},
	}
	followUps := followUpsOf(all)
	cases := []struct {
		name string
		id   string
		gone []string
		want string // "" = may go
	}{
		{"no session was started from it", "lonely", nil, ""},
		{"a fork has its own copy", "fork", nil, ""},
		{"a follow-up still reads it", "parent", []string{"child-a"}, "session child-b was started from it (kandev start --parent) and reads its history; prune child-b first"},
		{"the first follow-up is named", "parent", nil, "session child-a was started"},
		{"every follow-up went", "parent", []string{"child-a", "child-b"}, ""},
	}
	for _, tc := range cases {
		gone := map[string]bool{}
		for _, id := range tc.gone {
			gone[id] = true
		}
		got := parentKept(tc.id, followUps, gone)
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: parentKept = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestWorktreeSharer_AWorktreeGoesOnlyWithTheLastSessionInIt(t *testing.T) {
	wt := func(path string, owned bool) *worktree.Worktree { return &worktree.Worktree{Path: path, Owned: owned} }
	parent := &state.Session{ID: "parent", Worktree: wt("/src/app-kandev-1", true)}
	fork := &state.Session{ID: "fork", Worktree: wt("/src/app-kandev-1", true)}
	inside := &state.Session{ID: "inside", Worktree: wt("/src/app-kandev-1/", false)}
	other := &state.Session{ID: "other", Worktree: wt("/src/app-kandev-2", true)}
	plain := &state.Session{ID: "plain"}
	cases := []struct {
		name string
		s    *state.Session
		all  []*state.Session
		gone []string
		want string
	}{
		{"alone in it", parent, []*state.Session{parent, other, plain}, nil, ""},
		{"a fork shares it", parent, []*state.Session{parent, fork}, nil, "fork"},
		{"a session started inside it shares it", parent, []*state.Session{parent, inside}, nil, "inside"},
		{"the sharer was pruned first", parent, []*state.Session{parent, fork}, []string{"fork"}, ""},
		{"no worktree", plain, []*state.Session{plain, parent}, nil, ""},
	}
	for _, tc := range cases {
		gone := map[string]bool{}
		for _, id := range tc.gone {
			gone[id] = true
		}
		if got := worktreeSharer(tc.s, tc.all, gone); got != tc.want {
			t.Errorf("%s: worktreeSharer = %q, want %q", tc.name, got, tc.want)
		}
	}
}
