package prune

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

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

func TestNewPlan_DeletesWhatTheRulesAllowInOrder(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	// sess builds a session: its state, and how long since its last activity.
	sess := func(id, st string, idle time.Duration) *state.Session {
		return &state.Session{ID: id, State: st, LastActivityAt: now.Add(-idle)}
	}
	child := func(s *state.Session, parent string) *state.Session { s.ParentID = parent; return s }
	fork := func(s *state.Session, parent string) *state.Session { s.ParentID, s.ForkedAt = parent, 4; return s }
	inWorktree := func(s *state.Session, path string) *state.Session {
		s.Worktree = &worktree.Worktree{Path: path, Owned: true, Branch: "kandev/" + s.ID}
		return s
	}
	const done, failed, cancelled, running, waiting = state.StateCompleted, state.StateFailed, state.StateCancelled, state.StateRunning, state.StateWaitingForInput
	cases := []struct {
		name     string
		sessions []*state.Session
		filter   Filter
		kept     map[string]string // what the checks found
		// wantDelete: ids in order; "id@sharer" when a sharer keeps its worktree.
		wantDelete []string
		wantKept   map[string]string // id -> the start of why
	}{
		{name: "every finished state goes, an unfinished one is not a candidate",
			sessions:   []*state.Session{sess("a", done, 0), sess("b", failed, 0), sess("c", cancelled, 0), sess("d", running, 0), sess("e", waiting, 0)},
			wantDelete: []string{"a", "b", "c"}},
		{name: "--state takes only that finished state",
			sessions:   []*state.Session{sess("a", done, 0), sess("b", failed, 0), sess("c", cancelled, 0)},
			filter:     Filter{State: failed},
			wantDelete: []string{"b"}},
		{name: "--older-than takes only sessions idle that long (the bound included)",
			sessions:   []*state.Session{sess("new", done, day), sess("edge", done, 30*day), sess("old", done, 40*day)},
			filter:     Filter{OlderThan: 30 * day},
			wantDelete: []string{"edge", "old"}},
		{name: "a session a check keeps stays, with the check's reason",
			sessions:   []*state.Session{sess("owned", done, 0), sess("free", done, 0)},
			kept:       map[string]string{"owned": "a live kandev process owns it"},
			wantDelete: []string{"free"},
			wantKept:   map[string]string{"owned": "a live kandev process owns it"}},
		{name: "a reason for a session that is not a candidate is not reported",
			sessions: []*state.Session{sess("young", done, day)},
			filter:   Filter{OlderThan: 30 * day},
			kept:     map[string]string{"young": "a live kandev process owns it"}},
		{name: "a parent goes after the session started from it",
			sessions:   []*state.Session{sess("parent", done, 0), child(sess("kid", done, 0), "parent")},
			wantDelete: []string{"kid", "parent"}},
		{name: "a chain goes child first",
			sessions:   []*state.Session{sess("p", done, 0), child(sess("c", done, 0), "p"), child(sess("g", done, 0), "c")},
			wantDelete: []string{"g", "c", "p"}},
		{name: "a parent stays while a session started from it is kept",
			sessions: []*state.Session{sess("parent", done, 0), child(sess("kid", done, 0), "parent")},
			kept:     map[string]string{"kid": "attached to shell-1"},
			wantKept: map[string]string{"kid": "attached to shell-1", "parent": "session kid was started from it"}},
		{name: "a parent stays while a session started from it runs",
			sessions: []*state.Session{sess("parent", done, 0), child(sess("kid", running, 0), "parent")},
			wantKept: map[string]string{"parent": "session kid was started from it (kandev start --parent) and reads its history; prune kid first"}},
		{name: "a parent stays while a session started from it is outside the filter, and so does its own parent",
			sessions: []*state.Session{sess("p", done, 40*day), child(sess("c", done, 40*day), "p"), child(sess("g", done, day), "c")},
			filter:   Filter{OlderThan: 30 * day},
			wantKept: map[string]string{"c": "session g was started", "p": "session c was started"}},
		{name: "a fork holds its own copy and does not hold its parent",
			sessions:   []*state.Session{sess("parent", done, 0), fork(sess("fork", running, 0), "parent")},
			wantDelete: []string{"parent"}},
		{name: "a worktree goes with the last session in it",
			sessions:   []*state.Session{inWorktree(sess("a", done, 0), "/src/w"), inWorktree(sess("b", done, 0), "/src/w/"), inWorktree(sess("c", done, 0), "/src/other")},
			wantDelete: []string{"a@b", "b", "c"}},
		{name: "a worktree stays for a session that runs in it",
			sessions:   []*state.Session{inWorktree(sess("a", done, 0), "/src/w"), inWorktree(sess("b", running, 0), "/src/w")},
			wantDelete: []string{"a@b"}},
		{name: "a worktree stays for a session a check keeps",
			sessions:   []*state.Session{inWorktree(sess("a", done, 0), "/src/w"), inWorktree(sess("b", done, 0), "/src/w")},
			kept:       map[string]string{"a": "its worktree /src/w has 1 uncommitted file"},
			wantDelete: []string{"b@a"},
			wantKept:   map[string]string{"a": "its worktree /src/w has 1"}},
		{name: "nothing finished, nothing to do",
			sessions: []*state.Session{sess("a", running, 0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kept := tc.kept
			if kept == nil {
				kept = map[string]string{}
			}
			p := NewPlan(Facts{Sessions: tc.sessions, Now: now, Filter: tc.filter, Kept: kept})
			var got []string
			for _, st := range p.Delete {
				d := st.Session.ID
				if st.Sharer != "" {
					d += "@" + st.Sharer
				}
				got = append(got, d)
			}
			if strings.Join(got, " ") != strings.Join(tc.wantDelete, " ") {
				t.Errorf("delete = %q, want %q", got, tc.wantDelete)
			}
			if len(p.Kept) != len(tc.wantKept) {
				t.Errorf("kept = %q, want %q", p.Kept, tc.wantKept)
			}
			for id, want := range tc.wantKept {
				if !strings.HasPrefix(p.Kept[id], want) {
					t.Errorf("kept[%s] = %q, want it to start %q", id, p.Kept[id], want)
				}
			}
		})
	}
}
