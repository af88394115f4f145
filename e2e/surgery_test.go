package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// surgeryWorld is a world with demo agent variants: "replay" can neither
// resume nor load (so nor fork natively), "nocommands" advertises no compact.
func surgeryWorld(t *testing.T) *world {
	w := newWorld(t)
	w.config(`
[agents.replay]
command = ["` + kandevBin + `", "demo-agent", "--no-resume", "--no-load"]
[agents.nocommands]
command = ["` + kandevBin + `", "demo-agent", "--no-commands"]
`)
	return w
}

// turnEnd is the seq of the turn_ended of turn in id's log.
func (w *world) turnEnd(id, turn string) int64 {
	w.t.Helper()
	for _, e := range w.events(id) {
		if e.Type == eventlog.EventTurnEnded && e.TurnID == turn {
			return e.Seq
		}
	}
	w.t.Fatalf("no turn_ended for %s in %s", turn, id)
	return 0
}

// recall asks the session what it remembers and returns the answer.
func (w *world) recall(id string) string {
	w.t.Helper()
	w.mustRun("prompt", id, "recall")
	evs := w.events(id)
	return agentText(evs, lastTurn(evs))
}

// threeWords starts a session on agent and has it remember ALPHA, BETA and
// GAMMA in three turns.
func threeWords(w *world, agent string) string {
	w.t.Helper()
	id, r := w.start("--agent", agent, "remember ALPHA")
	if r.code != 0 {
		w.t.Fatal(r)
	}
	w.mustRun("prompt", id, "remember BETA")
	w.mustRun("prompt", id, "remember GAMMA")
	return id
}

func TestFork_AtTheEndUsesNativeForkAndKeepsTheParent(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	parent := threeWords(w, "demo")
	before := len(w.events(parent))
	var out struct {
		Session state.Session `json:"session"`
		Fork    struct {
			Method   string `json:"method"`
			ForkedAt int64  `json:"forked_at"`
		} `json:"fork"`
	}
	decodeJSON(t, w.mustRun("--json", "fork", parent, "--title", "other way").stdout, &out)
	child := out.Session.ID
	if out.Fork.Method != "native" || out.Session.ParentID != parent || out.Fork.ForkedAt != w.turnEnd(parent, "t3") || out.Session.Title != "other way" {
		t.Fatalf("fork answer: %+v", out)
	}
	if got := w.recall(child); !strings.Contains(got, "ALPHA, BETA, GAMMA") {
		t.Fatalf("child recalls %q, want all three words", got)
	}
	w.mustRun("prompt", child, "remember DELTA")
	if got := w.recall(parent); strings.Contains(got, "DELTA") || !strings.Contains(got, "GAMMA") {
		t.Fatalf("parent recalls %q: the child's words leaked, or its own are lost", got)
	}
	if n := len(w.events(parent)); n <= before {
		t.Fatalf("parent log did not grow with its own turn")
	}
	assertNoSeqGap(t, w.events(child))
}

func TestFork_AtAnEarlierTurnRecallsOnlyWhatWasSaidUpToIt(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"demo", "replay"} {
		t.Run(agent, func(t *testing.T) {
			w := surgeryWorld(t)
			parent := threeWords(w, agent)
			at := strconv.FormatInt(w.turnEnd(parent, "t2"), 10)
			r := w.mustRun("fork", parent, "--at", at)
			child := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
			if !strings.Contains(r.stdout, "fresh agent session") {
				t.Fatalf("an earlier fork must replay:\n%s", r)
			}
			got := w.recall(child)
			if !strings.Contains(got, "ALPHA, BETA") || strings.Contains(got, "GAMMA") {
				t.Fatalf("child recalls %q, want ALPHA and BETA only", got)
			}
			if got := w.recall(parent); !strings.Contains(got, "ALPHA, BETA, GAMMA") {
				t.Fatalf("parent recalls %q after the fork", got)
			}
			tr := w.mustRun("transcript", child).stdout
			if !strings.Contains(tr, "remember BETA") || strings.Contains(tr, "remember GAMMA") || !strings.Contains(tr, "Forked from session "+parent) {
				t.Fatalf("child transcript:\n%s", tr)
			}
		})
	}
}

func TestFork_AtASeqThatIsNoTurnBoundaryNamesTheNearest(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	parent := threeWords(w, "demo")
	end1, end2 := w.turnEnd(parent, "t1"), w.turnEnd(parent, "t2")
	r := w.run("fork", parent, "--at", strconv.FormatInt(end1+1, 10))
	if r.code != 2 || !strings.Contains(r.stderr, strconv.FormatInt(end1, 10)+" or "+strconv.FormatInt(end2, 10)) {
		t.Fatalf("want exit 2 naming %d and %d: %s", end1, end2, r)
	}
}

func TestRewind_ForgetsWhatCameAfterAndSaysFilesStay(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"demo", "replay"} {
		t.Run(agent, func(t *testing.T) {
			w := surgeryWorld(t)
			id := threeWords(w, agent)
			w.mustRun("--permissions", "approve-all", "prompt", id, "/write notes.txt changed after the cut")
			to := w.turnEnd(id, "t2")
			r := w.mustRun("rewind", id, "--to", strconv.FormatInt(to, 10))
			if !strings.Contains(r.stdout, "files on disk are not rewound") || !strings.Contains(r.stdout, "edit") {
				t.Fatalf("rewind must say files stay and name the edit:\n%s", r)
			}
			got := w.recall(id)
			if !strings.Contains(got, "ALPHA, BETA") || strings.Contains(got, "GAMMA") {
				t.Fatalf("after the rewind the agent recalls %q, want ALPHA and BETA only", got)
			}
			if b, _ := os.ReadFile(filepath.Join(w.cwd, "notes.txt")); !strings.Contains(string(b), "changed after the cut") {
				t.Fatalf("the file written after the cut should stay: %q", b)
			}
			tr := w.mustRun("transcript", id).stdout
			if strings.Contains(tr, "remember GAMMA") || !strings.Contains(tr, "remember BETA") {
				t.Fatalf("transcript must show the current epoch only:\n%s", tr)
			}
			if all := w.mustRun("transcript", id, "--all-epochs").stdout; !strings.Contains(all, "remember GAMMA") {
				t.Fatalf("transcript --all-epochs must show everything:\n%s", all)
			}
			if recap := w.mustRun("recap", id).stdout; strings.Contains(recap, "GAMMA") {
				t.Fatalf("recap must show the current epoch only:\n%s", recap)
			}
			rewinds := ofType(w.events(id), eventlog.EventRewind)
			if len(rewinds) != 1 || rewinds[0].Epoch != 1 || rewinds[0].ToSeq == nil || *rewinds[0].ToSeq != to {
				t.Fatalf("want one rewind event, epoch 1, to_seq %d: %+v", to, rewinds)
			}
			assertNoSeqGap(t, w.events(id))
		})
	}
}

func TestClear_ThenRecallRemembersNothing(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	id := threeWords(w, "demo")
	r := w.mustRun("clear", id)
	if !strings.Contains(r.stdout, "no history") || !strings.Contains(r.stdout, "files on disk are not rewound") {
		t.Fatalf("clear output:\n%s", r)
	}
	if got := w.recall(id); !strings.Contains(got, "I remember nothing") {
		t.Fatalf("after clear the agent recalls %q", got)
	}
	for _, e := range ofType(w.events(id), eventlog.EventUserMessage) {
		if strings.Contains(e.Content, "RESUME CONTEXT") {
			t.Fatalf("a cleared session must get no resume context: %q", e.Content)
		}
	}
	if s := w.session(id); s.Epoch != 1 || s.RewindPending != nil {
		t.Fatalf("record after clear: epoch %d, pending %+v", s.Epoch, s.RewindPending)
	}
}

func TestRewind_OfAFinishedSessionIsRefused(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	id := threeWords(w, "demo")
	w.mustRun("done", id)
	if r := w.run("rewind", id, "--to", "0"); r.code != 5 {
		t.Fatalf("rewind of a done session: want exit 5: %s", r)
	}
}

func TestStartWorktree_RunsInItsOwnWorktreeAndPruneRemovesItOnlyWhenClean(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	w.cwd = gitRepo(t)
	clean, r := w.start("--worktree", "--permissions", "approve-all", "/write hello.txt from the agent")
	if r.code != 0 {
		t.Fatal(r)
	}
	s := w.session(clean)
	if s.Worktree == nil || !s.Worktree.Owned || s.Worktree.Branch != "kandev/"+clean || s.Cwd != s.Worktree.Path {
		t.Fatalf("worktree record: %+v cwd %s", s.Worktree, s.Cwd)
	}
	if _, err := os.Stat(filepath.Join(s.Worktree.Path, "hello.txt")); err != nil {
		t.Fatalf("the agent did not write in its worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.cwd, "hello.txt")); err == nil {
		t.Fatal("the agent wrote in the main work tree")
	}
	git(t, s.Worktree.Path, "add", "-A")
	git(t, s.Worktree.Path, "commit", "-q", "-m", "the agent's file")

	dirty, r := w.start("--worktree=try-b", "--permissions", "approve-all", "/write wip.txt not committed")
	if r.code != 0 {
		t.Fatal(r)
	}
	d := w.session(dirty)
	if d.Worktree == nil || d.Worktree.Branch != "try-b" {
		t.Fatalf("named branch: %+v", d.Worktree)
	}
	w.mustRun("done", clean)
	w.mustRun("done", dirty)
	out := w.mustRun("prune").stdout
	if !strings.Contains(out, "pruned "+clean) || !strings.Contains(out, "kept "+dirty) || !strings.Contains(out, "uncommitted, untracked or ignored file(s) (wip.txt)") {
		t.Fatalf("prune output:\n%s", out)
	}
	if _, err := os.Stat(s.Worktree.Path); !os.IsNotExist(err) {
		t.Fatalf("clean worktree %s should be gone: %v", s.Worktree.Path, err)
	}
	if _, err := os.Stat(filepath.Join(d.Worktree.Path, "wip.txt")); err != nil {
		t.Fatalf("dirty worktree must stay: %v", err)
	}
	if out, err := exec.Command("git", "-C", w.cwd, "rev-parse", "--verify", "kandev/"+clean).CombinedOutput(); err != nil {
		t.Fatalf("the pruned worktree's branch must stay: %v %s", err, out)
	}
}

func TestForkWorktree_TriesAnotherApproachOnItsOwnCopy(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	w.cwd = gitRepo(t)
	parent, r := w.start("remember ALPHA")
	if r.code != 0 {
		t.Fatal(r)
	}
	out := w.mustRun("fork", parent, "--worktree").stdout
	child := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	c := w.session(child)
	if c.Worktree == nil || !c.Worktree.Owned || c.Cwd == w.session(parent).Cwd {
		t.Fatalf("fork --worktree: %+v cwd %s", c.Worktree, c.Cwd)
	}
	if got := w.recall(child); !strings.Contains(got, "ALPHA") {
		t.Fatalf("child in its worktree recalls %q", got)
	}
}

func TestCompact_IsAMaintenanceTurnThatKeepsWhatToRemember(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	id := threeWords(w, "demo")
	r := w.mustRun("compact", id)
	if !strings.Contains(r.stdout, "I still remember: ALPHA, BETA, GAMMA") {
		t.Fatalf("compact answer:\n%s", r)
	}
	evs := w.events(id)
	last := lastTurn(evs)
	var source string
	for _, e := range ofType(evs, eventlog.EventTurnStarted) {
		if e.TurnID == last {
			source = e.Source
		}
	}
	if source != eventlog.SourceMaintenance {
		t.Fatalf("compact turn source %q, want maintenance", source)
	}
	if got := w.recall(id); !strings.Contains(got, "ALPHA, BETA, GAMMA") {
		t.Fatalf("after compact the agent recalls %q", got)
	}
}

func TestCompact_RightAfterARewindSaysThereIsNothingToCompactYetAndKeepsTheContext(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	id := threeWords(w, "demo")
	w.mustRun("rewind", id, "--to", strconv.FormatInt(w.turnEnd(id, "t2"), 10))
	turns := len(ofType(w.events(id), eventlog.EventTurnStarted))
	// The agent's session is a fresh one: the kept conversation reaches it
	// with the next prompt, so there is nothing to compact yet.
	r := w.run("compact", id)
	if r.code != 5 || !strings.Contains(r.stderr, "nothing to compact yet") || strings.Contains(r.stdout, "Compacted") {
		t.Fatalf("compact right after a rewind: want exit 5 saying there is nothing to compact yet: %s", r)
	}
	if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != turns {
		t.Fatalf("a refused compact ran a turn: %d turns, want %d", n, turns)
	}
	if s := w.session(id); !s.PendingContext {
		t.Fatal("the pending resume context was spent by the refused compact")
	}
	got := w.recall(id)
	if !strings.Contains(got, "ALPHA, BETA") || strings.Contains(got, "GAMMA") {
		t.Fatalf("the next prompt should carry the context up to t2; the agent recalls %q", got)
	}
	if s := w.session(id); s.PendingContext {
		t.Fatal("the ordinary prompt should have spent the pending context")
	}
	// Now the agent holds the conversation: compact compacts it.
	if r := w.mustRun("compact", id); !strings.Contains(r.stdout, "Compacted") {
		t.Fatalf("compact after the prompt that carried the context: %s", r)
	}
	// After a clear there is nothing either.
	w.mustRun("clear", id)
	if r := w.run("compact", id); r.code != 5 || !strings.Contains(r.stderr, "nothing to compact yet") {
		t.Fatalf("compact right after a clear: %s", r)
	}
}

func TestCompact_OnAnAgentWithoutTheCommandExits5(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	id := threeWords(w, "nocommands")
	r := w.run("compact", id)
	if r.code != 5 || !strings.Contains(r.stderr, "no compaction command") {
		t.Fatalf("want exit 5 saying the agent has no compaction command: %s", r)
	}
	if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != 3 {
		t.Fatalf("a refused compact must run no turn: %d turns", n)
	}
}

func TestSurgery_WhileATurnRunsExits3(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	id := threeWords(w, "demo")
	cmd, _ := w.background("prompt", id, "/sleep 20000")
	defer cmd.Wait()
	defer w.run("cancel", id)
	waitFor(t, 20*time.Second, "the turn to start", func() bool {
		return lastTurn(w.eventsSoFar(id)) == "t4" && w.ownerAlive(id)
	})
	for _, args := range [][]string{{"rewind", id, "--to", "0"}, {"clear", id}, {"compact", id}} {
		if r := w.run(args...); r.code != 3 {
			t.Fatalf("%v while a turn runs: want exit 3: %s", args, r)
		}
	}
	if rewinds := ofType(w.events(id), eventlog.EventRewind); len(rewinds) != 0 {
		t.Fatalf("a refused rewind left a fence: %+v", rewinds)
	}
}

func TestCompact_KilledMidTurnPausesInsteadOfContinuing(t *testing.T) {
	t.Parallel()
	w := surgeryWorld(t)
	w.config(`
[agents.slow]
command = ["` + kandevBin + `", "demo-agent", "--delay", "400"]
`)
	id := threeWords(w, "slow")
	w.killAt(func(e eventlog.Event) bool {
		return e.Type == eventlog.EventTurnStarted && e.Source == eventlog.SourceMaintenance
	},
		20*time.Second, "compact", id)
	r := w.run("resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, "maintenance turn") {
		t.Fatalf("resume after a killed compact: want exit 5 naming the maintenance turn: %s", r)
	}
	if st := w.status(id); st.Status.Badge != "paused" || st.Status.Pause == nil || st.Status.Pause.Kind != state.PauseMaintenance {
		t.Fatalf("status after a killed compact: %+v", st.Status)
	}
	for _, e := range ofType(w.events(id), eventlog.EventTurnStarted) {
		if e.Source == eventlog.SourceContinuation {
			t.Fatal("a maintenance turn was continued automatically")
		}
	}
	if got := w.recall(id); !strings.Contains(got, "GAMMA") {
		t.Fatalf("a prompt takes over after the pause; the agent recalls %q", got)
	}
}
