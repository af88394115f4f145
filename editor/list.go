package editor

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/state"
)

const defaultPageSize = 50

// listPage picks one page of sessions for session/list: those in cwd ("" for
// every directory), newest activity first (ties by id), starting after the
// session the cursor names. The cursor is the last session's activity time
// and id, so sessions that change between pages move, but none is repeated
// out of order or skipped among those that did not change. next is "" on
// the last page. dir maps a directory to the one it names (symlinks
// resolved), so a session started through a symlink is listed under the
// directory it is in; nil compares cleaned paths.
func listPage(all []*state.Session, cwd, cursor string, size int, dir func(string) string) (page []*state.Session, next string, err error) {
	if dir == nil {
		dir = filepath.Clean
	}
	if cwd != "" {
		cwd = dir(cwd)
	}
	picked := make([]*state.Session, 0, len(all))
	for _, s := range all {
		if cwd == "" || dir(s.Cwd) == cwd {
			picked = append(picked, s)
		}
	}
	slices.SortStableFunc(picked, func(a, b *state.Session) int {
		if c := b.LastActivityAt.Compare(a.LastActivityAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	start := 0
	if cursor != "" {
		at, id, err := parseCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		start, _ = slices.BinarySearchFunc(picked, 0, func(s *state.Session, _ int) int {
			if c := at.Compare(s.LastActivityAt); c != 0 {
				return c
			}
			if s.ID < id {
				return 1
			}
			return -1
		})
	}
	end := min(start+size, len(picked))
	page = picked[start:end]
	if end < len(picked) && len(page) > 0 {
		last := page[len(page)-1]
		next = last.LastActivityAt.UTC().Format(time.RFC3339Nano) + "|" + last.ID
	}
	return page, next, nil
}

var errBadCursor = errors.New("invalid cursor: pass the nextCursor of the previous page")

func parseCursor(c string) (time.Time, string, error) {
	at, id, ok := strings.Cut(c, "|")
	if !ok || id == "" {
		return time.Time{}, "", errBadCursor
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return time.Time{}, "", errBadCursor
	}
	return t, id, nil
}

// resolvedDirs returns a dir function for listPage that resolves symlinks
// (remembering each answer for one listing); a path that does not resolve
// (removed since) stays as it is, cleaned.
func resolvedDirs() func(string) string {
	seen := map[string]string{}
	return func(p string) string {
		if r, ok := seen[p]; ok {
			return r
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			r = filepath.Clean(p)
		}
		seen[p] = r
		return r
	}
}
