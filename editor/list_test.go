package editor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

func TestListPage_FiltersByCwdAndPagesNewestFirstWithoutRepeats(t *testing.T) {
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	mk := func(id, cwd string, minutes int) *state.Session {
		return &state.Session{ID: id, Cwd: cwd, LastActivityAt: base.Add(time.Duration(minutes) * time.Minute)}
	}
	// c and d share an activity time: the id orders them.
	all := []*state.Session{mk("a", "/p", 1), mk("b", "/q", 2), mk("c", "/p", 3), mk("d", "/p", 3), mk("e", "/p/", 4)}
	cases := []struct {
		name string
		cwd  string
		size int
		want [][]string // pages
	}{
		{"every directory, one page", "", 10, [][]string{{"e", "d", "c", "b", "a"}}},
		{"every directory, pages of two", "", 2, [][]string{{"e", "d"}, {"c", "b"}, {"a"}}},
		{"one directory (trailing slash is the same)", "/p", 3, [][]string{{"e", "d", "c"}, {"a"}}},
		{"ties split across pages", "/p", 2, [][]string{{"e", "d"}, {"c", "a"}}},
		{"a directory with none", "/r", 2, [][]string{{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cursor := ""
			for i, want := range c.want {
				page, next, err := listPage(all, c.cwd, cursor, c.size, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, s := range page {
					got = append(got, s.ID)
				}
				if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("page %d: %v, want %v", i, got, want)
				}
				if last := i == len(c.want)-1; last != (next == "") {
					t.Fatalf("page %d: next cursor %q", i, next)
				}
				cursor = next
			}
		})
	}
	if _, _, err := listPage(all, "", "garbage", 2, nil); err == nil {
		t.Fatal("a malformed cursor was accepted")
	}
}

func TestListPage_ASessionStartedThroughASymlinkIsListedUnderTheDirectoryItIsIn(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	all := []*state.Session{{ID: "through-link", Cwd: link}, {ID: "direct", Cwd: real}, {ID: "gone", Cwd: "/no/such/dir"}}
	for _, asked := range []string{real, link, link + "/"} {
		page, _, err := listPage(all, asked, "", 10, resolvedDirs())
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 2 {
			t.Fatalf("listing %s: %d sessions, want both the one started through the link and the direct one", asked, len(page))
		}
	}
	if page, _, _ := listPage(all, "/no/such/dir", "", 10, resolvedDirs()); len(page) != 1 || page[0].ID != "gone" {
		t.Fatalf("a directory that no longer exists still lists its session: %d", len(page))
	}
}
