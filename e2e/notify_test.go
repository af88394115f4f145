package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/verdict"
)

type noteJSON struct {
	Session, Badge, Event, Summary string
}

// notifyWorld is a world whose [notify] command appends each note it gets
// to a file the test reads.
func notifyWorld(t *testing.T, extra string) (*world, string) {
	w := newWorld(t)
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	w.config("[notify]\ncommand = [\"sh\", \"-c\", \"cat >> " + notes + "\"]\n" + extra)
	return w, notes
}

// waitNote waits for a note of event kind for session id.
func waitNote(t *testing.T, notes, id, event string) noteJSON {
	t.Helper()
	var found noteJSON
	waitFor(t, 20*time.Second, "a "+event+" notification", func() bool {
		b, _ := os.ReadFile(notes)
		for _, line := range strings.Split(string(b), "\n") {
			var n noteJSON
			if json.Unmarshal([]byte(line), &n) == nil && n.Session == id && n.Event == event {
				found = n
				return true
			}
		}
		return false
	})
	if found.Summary == "" || found.Badge == "" {
		t.Fatalf("note without badge or summary: %+v", found)
	}
	return found
}

func noteCount(notes, event string) int {
	b, _ := os.ReadFile(notes)
	return strings.Count(string(b), `"event":"`+event+`"`)
}

func TestNotify_AUsageLimitNotifies(t *testing.T) {
	t.Parallel()
	w, notes := notifyWorld(t, "")
	w.env = append(w.env, "CI=1")
	id, _ := w.start("--linger", "0")
	if r := w.run("prompt", id, "--linger", "0", "/limit 60"); r.code != 8 {
		t.Fatal(r)
	}
	if n := waitNote(t, notes, id, "usage_limit"); n.Badge != verdict.BadgeWaitingForLimit || !strings.Contains(n.Summary, "resets at") {
		t.Fatalf("note %+v", n)
	}
	// A turn that ends in the foreground is seen there: no note.
	w.mustRun("prompt", id, "--linger", "0", "/say hi")
	time.Sleep(300 * time.Millisecond)
	if noteCount(notes, "turn_ended") != 0 {
		t.Fatal("a foreground turn was announced")
	}
}

func TestNotify_ATurnEndedOrFailedInADetachedOwnerNotifies(t *testing.T) {
	t.Parallel()
	w, notes := notifyWorld(t, "")
	id := w.startWarm("60s")
	w.mustRun("prompt", id, "/say DONE")
	if n := waitNote(t, notes, id, "turn_ended"); n.Badge != verdict.BadgeIdle || !strings.Contains(n.Summary, "end_turn") {
		t.Fatalf("note %+v", n)
	}
	if r := w.run("prompt", id, "/crash"); r.code != 6 {
		t.Fatalf("crash: %s", r)
	}
	waitNote(t, notes, id, "turn_failed")
}

func TestNotify_AParkedPermissionNotifies(t *testing.T) {
	t.Parallel()
	w, notes := notifyWorld(t, "")
	id := w.startWarm("60s", "--permissions", "defer")
	if r := w.run("--permissions", "defer", "prompt", id, "/write out.txt X"); r.code != 7 {
		t.Fatalf("want exit 7: %s", r)
	}
	if n := waitNote(t, notes, id, "permission"); n.Badge != verdict.BadgeWaitingForPermission || !strings.Contains(n.Summary, "kandev approve "+id) {
		t.Fatalf("note %+v", n)
	}
	w.mustRun("deny", id)
}

func TestNotify_APauseNotifies(t *testing.T) {
	t.Parallel()
	w, notes := notifyWorld(t, "")
	w.env = append(w.env, "CI=1")
	id, _ := w.start("--linger", "0")
	w.crashMidTurn(id, "--permissions", "approve-all")
	if r := w.run("--permissions", "deny-all", "resume", id); r.code != 5 {
		t.Fatalf("want the continuation paused (exit 5): %s", r)
	}
	if n := waitNote(t, notes, id, "paused"); n.Badge != verdict.BadgePaused {
		t.Fatalf("note %+v", n)
	}
}

func TestNotify_AHangingCommandNeitherBlocksTheTurnNorOutlivesItsTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config("[notify]\ncommand = [\"sleep\", \"97.125\"]\ntimeout_seconds = 1\n")
	id, _ := w.start("--linger", "0")
	began := time.Now()
	if r := w.run("prompt", id, "--linger", "0", "/limit 60"); r.code != 8 {
		t.Fatal(r)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("the turn took %s with a hanging hook", d)
	}
	running := func() bool {
		out, _ := exec.Command("pgrep", "-f", "^sleep 97.125").Output()
		return strings.TrimSpace(string(out)) != ""
	}
	waitFor(t, 10*time.Second, "the hook to run", running)
	waitFor(t, 10*time.Second, "the hook to be killed at its timeout", func() bool { return !running() })
}

func TestNotify_ALongTurnInATerminalEndsWithOSC9(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("SKIP: script(1) is not installed (util-linux)")
	}
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	w.config("[notify]\nafter_seconds = 1\n")
	id, _ := w.start("--linger", "0")
	typescript := filepath.Join(t.TempDir(), "typescript")
	run := func(prompt string) string {
		os.Remove(typescript)
		cmd := exec.Command("script", "-q", "-e", "-c", kandevBin+" prompt "+id+" --linger 0 '"+prompt+"'", typescript)
		cmd.Dir, cmd.Env = w.cwd, w.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("script: %v\n%s", err, out)
		}
		b, _ := os.ReadFile(typescript)
		return string(b)
	}
	if got := run("/sleep 1500"); !strings.Contains(got, "\x1b]9;kandev: session "+id) || !strings.Contains(got, "\x07") {
		t.Fatalf("a 1.5 s turn in a terminal with after_seconds = 1 sent no OSC 9:\n%q", got)
	}
	if got := run("/say quick"); strings.Contains(got, "\x1b]9;") {
		t.Fatalf("a quick turn sent an OSC 9: %q", got)
	}
	// stderr not a terminal: never.
	if r := w.run("prompt", id, "--linger", "0", "/sleep 1500"); strings.Contains(r.stderr, "\x1b]9;") {
		t.Fatalf("OSC 9 on a stderr that is no terminal: %q", r.stderr)
	}
}
