package e2e_test

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// surgeryKillTries is how many kills each operation gets. The writes come at
// the end of an operation, after kandev started and read the log, so the
// delays bisect towards the moment the operation completes: a kill that
// came too early moves the next one later, one that came too late earlier.
const surgeryKillTries = 8

// bigSurgerySession is a home with one demo session that streamed a long
// answer (a 5 MB log) and then remembered ALPHA, BETA and GAMMA, so that a
// rewind, a clear or a fork reads and writes for long enough to be killed
// in the middle. The long answer comes first so that a resume context,
// which keeps the newest turns, still holds the three words.
func bigSurgerySession(t *testing.T) (*world, string) {
	w := surgeryWorld(t)
	id, r := w.start("/bulk 30000")
	if r.code != 0 {
		t.Fatal(r)
	}
	for _, word := range []string{"ALPHA", "BETA", "GAMMA"} {
		w.mustRun("prompt", id, "remember "+word)
	}
	return w, id
}

// clone is a new world whose home is a copy of w's (same working directory).
func (w *world) clone(t *testing.T) *world {
	c := newWorld(t)
	c.cwd = w.cwd
	if out, err := exec.Command("cp", "-a", w.home+"/.", c.home).CombinedOutput(); err != nil {
		t.Fatalf("copy the home: %v %s", err, out)
	}
	return c
}

// runKilledAfter runs kandev and SIGKILLs it after d; it reports whether the
// kill came before kandev exited.
func (w *world) runKilledAfter(d time.Duration, args ...string) bool {
	w.t.Helper()
	cmd := exec.Command(kandevBin, args...)
	cmd.Dir, cmd.Env = w.cwd, w.env
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
	err := cmd.Wait()
	timer.Stop()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	if err != nil {
		w.t.Fatalf("kandev %v (not killed): %v", args, err)
	}
	return false
}

// assertRepairable checks what a SIGKILL may leave: list --json parses, and
// doctor reports nothing but a torn tail (which repair then fixes), an
// interrupted turn or a paused continuation.
func (w *world) assertRepairable(when string) {
	w.t.Helper()
	// An agent whose kandev was killed sees its stdin close and exits.
	waitFor(w.t, 10*time.Second, "the agents of a killed kandev to exit", func() bool {
		return len(liveProcessesWithEnv("KANDEV_HOME", w.home)) == 0
	})
	var l struct {
		Sessions []state.Session `json:"sessions"`
	}
	decodeJSON(w.t, w.mustRun("--json", "list").stdout, &l)
	for pass := 0; pass < 2; pass++ {
		var d struct {
			Checks []struct {
				Name, Message string
				OK            bool
			} `json:"checks"`
		}
		decodeJSON(w.t, w.run("--json", "doctor").stdout, &d)
		torn := 0
		for _, c := range d.Checks {
			id, isSession := strings.CutPrefix(c.Name, "session ")
			switch {
			case c.OK || !isSession:
			case strings.Contains(c.Message, "torn line") && pass == 0:
				torn++
				w.mustRun("repair", id)
			case strings.HasPrefix(c.Message, "interrupted") || strings.HasPrefix(c.Message, "automatic continuation paused"):
			default:
				w.t.Fatalf("doctor %s (pass %d): %s: %s", when, pass, c.Name, c.Message)
			}
		}
		if torn == 0 {
			return
		}
	}
}

// fences counts the rewind events of each epoch in id's log and fails when
// one is there twice.
func (w *world) fences(id string) map[int]int {
	w.t.Helper()
	n := map[int]int{}
	for _, e := range ofType(w.events(id), eventlog.EventRewind) {
		if n[e.Epoch]++; n[e.Epoch] > 1 {
			w.t.Fatalf("epoch %d is fenced twice in %s", e.Epoch, id)
		}
	}
	return n
}

// surgeryCrashOp is one operation to kill and what the session must recall
// after it, depending on whether it took effect.
type surgeryCrashOp struct {
	name  string
	args  func(w *world, id string) []string
	check func(w *world, id string) string // after the kill: where it landed
}

func TestSurgery_SIGKILLDuringEachOperationLeavesARepairableSessionWithNoEpochTwice(t *testing.T) {
	t.Parallel()
	tmpl, id := bigSurgerySession(t)
	beta := strconv.FormatInt(tmpl.turnEnd(id, "t3"), 10)
	ops := []surgeryCrashOp{
		{"rewind", func(*world, string) []string { return []string{"rewind", id, "--to", beta} }, checkRewound("ALPHA, BETA", "GAMMA")},
		{"clear", func(*world, string) []string { return []string{"clear", id} }, checkRewound("I remember nothing", "ALPHA")},
		{"fork", func(*world, string) []string { return []string{"fork", id} }, checkForked},
		{"compact", func(*world, string) []string { return []string{"compact", id} }, checkCompacted},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel() // each on its own copy of the home; one after another they were CI's longest test
			w := tmpl.clone(t)
			began := time.Now()
			w.mustRun(op.args(w, id)...)
			full := time.Since(began)
			if got := op.check(w, id); got != "complete" {
				t.Fatalf("the uninterrupted %s landed %q", op.name, got)
			}
			landed := map[string]int{}
			lo, hi := time.Duration(0), full*12/10
			for i := 0; i < surgeryKillTries; i++ {
				d := (lo + hi) / 2
				w := tmpl.clone(t)
				killed := w.runKilledAfter(d, op.args(w, id)...)
				w.assertRepairable(fmt.Sprintf("after %s killed at %v", op.name, d))
				where := op.check(w, id)
				if killed && where != "complete" {
					lo = d
				} else {
					hi = d
				}
				if !killed {
					where += " (not killed)"
				}
				landed[where]++
			}
			t.Logf("%s: uninterrupted %v; %d kills landed %v", op.name, full.Round(time.Millisecond), surgeryKillTries, landed)
		})
	}
}

// checkRewound: the rewind took effect (the record says epoch 1) or not;
// either way the next prompt repairs what is missing, the fence is in the
// log once exactly when it took effect, and the agent recalls accordingly.
func checkRewound(want, gone string) func(w *world, id string) string {
	return func(w *world, id string) string {
		w.t.Helper()
		pending := w.session(id).RewindPending != nil
		w.fences(id)
		got := w.recall(id)
		epoch := w.session(id).Epoch
		fences := w.fences(id)
		if fences[1] != epoch || w.session(id).RewindPending != nil {
			w.t.Fatalf("record epoch %d, fences %v, pending %v after the next prompt", epoch, fences, w.session(id).RewindPending)
		}
		if epoch == 0 {
			if !strings.Contains(got, "ALPHA, BETA, GAMMA") {
				w.t.Fatalf("the rewind did not take effect, yet the agent recalls %q", got)
			}
			return "before"
		}
		if !strings.Contains(got, want) || strings.Contains(got, gone) {
			w.t.Fatalf("after the rewind the agent recalls %q, want %q without %q", got, want, gone)
		}
		if pending {
			return "record written, fence pending"
		}
		return "complete"
	}
}

// checkForked: a fork made a whole child that recalls all three words, or
// none; the parent is unchanged either way.
func checkForked(w *world, id string) string {
	w.t.Helper()
	var l struct {
		Sessions []state.Session `json:"sessions"`
	}
	decodeJSON(w.t, w.mustRun("--json", "list").stdout, &l)
	var children []string
	for _, s := range l.Sessions {
		if s.ParentID == id {
			children = append(children, s.ID)
		}
	}
	if got := w.recall(id); !strings.Contains(got, "ALPHA, BETA, GAMMA") {
		w.t.Fatalf("the parent recalls %q after a killed fork", got)
	}
	if len(w.fences(id)) != 0 {
		w.t.Fatal("a fork fenced the parent")
	}
	switch len(children) {
	case 0:
		return "before"
	case 1:
		native := w.session(children[0]).ResumeToken != ""
		if got := w.recall(children[0]); !strings.Contains(got, "ALPHA, BETA, GAMMA") {
			w.t.Fatalf("the child recalls %q", got)
		}
		assertNoSeqGap(w.t, w.events(children[0]))
		if native {
			return "complete"
		}
		return "child made, agent session not yet"
	}
	w.t.Fatalf("one fork made %d children: %v", len(children), children)
	return ""
}

// checkCompacted: a compact never fences, never continues by itself, and
// leaves the agent remembering all three words.
func checkCompacted(w *world, id string) string {
	w.t.Helper()
	evs := w.events(id)
	maint := 0
	for _, e := range ofType(evs, eventlog.EventTurnStarted) {
		if e.Source == eventlog.SourceMaintenance {
			maint++
		}
	}
	if got := w.recall(id); !strings.Contains(got, "ALPHA, BETA, GAMMA") {
		w.t.Fatalf("after a killed compact the agent recalls %q", got)
	}
	for _, e := range ofType(w.events(id), eventlog.EventTurnStarted) {
		if e.Source == eventlog.SourceContinuation {
			w.t.Fatal("a maintenance turn was continued automatically")
		}
	}
	if len(w.fences(id)) != 0 {
		w.t.Fatal("a compact fenced the log")
	}
	if maint == 0 {
		return "before"
	}
	if ends := ofType(evs, eventlog.EventTurnEnded); ends[len(ends)-1].TurnID != lastTurn(evs) {
		return "mid-turn"
	}
	return "complete"
}
