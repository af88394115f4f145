package remote

import (
	"path/filepath"
	"testing"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

func TestLocalRecord_APulledCwdNeverChoosesWhereTheAgentWrites(t *testing.T) {
	clone := Clone{Path: filepath.FromSlash("/home/b/project"), Branch: "main"}
	wt := func() *worktree.Worktree {
		return &worktree.Worktree{Path: "/home/a/project", Branch: "main", Valid: true, Owned: true}
	}
	mine := &state.Session{ID: "s", Cwd: "/home/b/mine", Workspace: "mine"}
	cases := []struct {
		name      string
		rec       state.Session
		local     *state.Session
		rel       string
		mapped    bool
		wantCwd   string
		wantPause string // PulledCwd; "" : runs
		wantValid bool   // the worktree's validity, when there is one
	}{
		{"a worktree mapped to the local clone runs there", state.Session{Cwd: "/home/a/project/sub", Worktree: wt()}, nil, "sub", true, filepath.Join(clone.Path, "sub"), "", true},
		{"a cwd that climbs out of the mapped clone pauses", state.Session{Cwd: "/etc", Worktree: wt()}, nil, "../../etc", true, clone.Path, filepath.Join(clone.Path, "../../etc"), true},
		{"no worktree and no local record: the remote's cwd pauses", state.Session{Cwd: "/home/b/.ssh"}, nil, "", false, "/home/b/.ssh", "/home/b/.ssh", false},
		{"no worktree, even in a clone that matches: pauses", state.Session{Cwd: "/home/b/.ssh"}, nil, "", true, "/home/b/.ssh", "/home/b/.ssh", false},
		{"a worktree with no clone here pauses and is not usable", state.Session{Cwd: "/home/a/project", Worktree: wt()}, nil, "", false, "/home/a/project", "/home/a/project", false},
		{"this machine's own record keeps its cwd", state.Session{Cwd: "/home/b/.ssh"}, mine, "", false, "/home/b/mine", "", false},
		{"no cwd at all pauses too", state.Session{}, nil, "", false, "", "(none recorded)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.rec.ID = "s"
			got := LocalRecord(c.rec, c.local, Origin{URL: "https://x/p.git", Branch: "main", Rel: c.rel}, clone, c.mapped)
			if got.Cwd != c.wantCwd || got.PulledCwd != c.wantPause {
				t.Fatalf("cwd %q pulled_cwd %q, want %q and %q", got.Cwd, got.PulledCwd, c.wantCwd, c.wantPause)
			}
			if got.Worktree != nil {
				if got.Worktree.Owned {
					t.Fatal("a pulled worktree is owned")
				}
				if got.Worktree.Valid != c.wantValid {
					t.Fatalf("worktree valid %v, want %v (%s)", got.Worktree.Valid, c.wantValid, got.Worktree.Problem)
				}
			}
		})
	}
}
