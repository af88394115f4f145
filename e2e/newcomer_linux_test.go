package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

// runUnwritable runs kandev with paths unwritable for it. As a user, by
// chmod (restored afterwards). As root, whom chmod does not stop, by a
// read-only bind mount of each path in a mount namespace of the command
// alone (unshare -m), so nothing outside it changes; where that is not
// allowed, the test is skipped, visibly.
func (w *world) runUnwritable(paths []string, args ...string) result {
	w.t.Helper()
	if os.Geteuid() != 0 {
		var modes []os.FileMode
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil {
				w.t.Fatal(err)
			}
			modes = append(modes, st.Mode().Perm())
			os.Chmod(p, st.Mode().Perm()&^0o222)
		}
		defer func() {
			for i, p := range paths {
				os.Chmod(p, modes[i])
			}
		}()
		return w.run(args...)
	}
	script := `for p in "$@"; do [ "$p" = -- ] && break; mount --bind "$p" "$p" && mount -o remount,ro,bind "$p" "$p" || exit 97; done
while [ "$1" != -- ]; do shift; done; shift; exec "$@"`
	argv := append([]string{"-m", "sh", "-c", script, "sh"}, paths...)
	argv = append(append(argv, "--", kandevBin), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", argv...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Skipf("SKIP: as root, chmod does not stop writes, and unshare is not available for a read-only bind mount: %v", err)
	}
	if code == 97 || strings.Contains(errb.String(), "unshare:") {
		w.t.Skipf("SKIP: as root, chmod does not stop writes, and a read-only bind mount is not allowed here: %s", errb.String())
	}
	return result{out.String(), errb.String(), code}
}

func TestDoctor_FindsASessionFileItCannotWriteWherePromptFails(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	os.Chmod(w.home, 0o700)
	id, r := w.start("remember FIG")
	mustOK(t, r)
	log := filepath.Join(w.home, "sessions", id+".jsonl")
	if r := w.runUnwritable([]string{log}, "prompt", id, "recall"); r.code == 0 {
		t.Fatalf("prompt wrote a log it cannot write? %s", r)
	}
	r = w.runUnwritable([]string{log}, "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, log) || strings.Contains(r.stdout, "everything looks healthy") {
		t.Fatalf("doctor does not name the session file it cannot write:\n%s", r)
	}
	if r := w.run("doctor"); r.code != 0 && strings.Contains(r.stdout, "cannot be written") {
		t.Fatalf("doctor still reports it once it is writable:\n%s", r)
	}
}

func TestDoctor_RunsReadOnlyOnAHomeItCannotWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		started bool // a home with a session, else one never set up (no sessions folder)
	}{{"a home with sessions", true}, {"a home never set up", false}} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.env = append(w.env, "CI=1")
			os.Chmod(w.home, 0o700) // private, so the one problem is that it cannot be written
			paths := []string{w.home}
			if tc.started {
				id, r := w.start("remember FIG")
				mustOK(t, r)
				paths = append(paths, filepath.Join(w.home, "sessions"))
				h, _ := state.OpenHome(w.home)
				waitFor(t, 10*time.Second, "the agent to be gone", func() bool { return !h.AgentAlive(id) })
			}
			before := treeOf(t, w.home)
			r := w.runUnwritable(paths, "doctor")
			if r.code != 1 || !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "cannot be written") || !strings.Contains(r.stdout, "agent demo") {
				t.Fatalf("doctor on a home it cannot write: want every check run and the home named (exit 1):\n%s", r)
			}
			if after := treeOf(t, w.home); after != before {
				t.Fatalf("doctor changed the home:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// treeOf lists the paths, sizes and modes under dir.
func treeOf(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %s %d;", strings.TrimPrefix(p, dir), info.Mode(), info.Size())
		}
		return nil
	})
	return b.String()
}
