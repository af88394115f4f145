//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// keepBothCmd finds the commands a divergence refusal prints.
var keepBothCmd = regexp.MustCompile(`kandev (repair|fork|pull) (\S+)( --replace)?`)

// recoverDiverged runs, on machine m, the commands a divergence refusal
// printed: they must name a fork and a pull --replace, and each must work.
func (t *twoTrial) recoverDiverged(m int, refusal string) {
	t.refusals++
	t.save(fmt.Sprintf("refusal-%d-%s.txt", t.refusals, machineNames[m]), refusal)
	cmds := keepBothCmd.FindAllStringSubmatch(refusal, -1)
	if len(cmds) < 2 || cmds[len(cmds)-2][1] != "fork" || cmds[len(cmds)-1][3] == "" {
		t.r.failf("a divergence refusal on %s names no commands that keep both: %s", machineNames[m], firstLine(refusal))
		return
	}
	t.on(m, "close", "--now", t.id) // a warm owner here would refuse the pull
	for _, c := range cmds {
		args := []string{c[1], c[2]}
		if c[3] != "" {
			args = append(args, "--replace")
		}
		res := t.on(m, args...)
		for try := 0; try < 4 && res.code == 1 && strings.Contains(res.stderr, "did not answer"); try++ {
			res = t.on(m, args...) // a slow remote (a loaded machine) is not what is tested
		}
		if res.code != 0 {
			t.r.failf("the printed recovery `kandev %s` on %s: %s", strings.Join(args, " "), machineNames[m], res.brief())
			return
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// converge brings both machines and the remote to one log: warm owners
// closed, then pulls and pushes (recovering divergences as printed) until
// every one of them succeeds and the three logs are equal. Pulls go first:
// the last turn's machine pushed it, so two pulls usually end it, and a
// push that would find the remote up to date is not run. A claim that a
// killed owner left is waited out.
func (t *twoTrial) converge() {
	if t.daemon != nil {
		t.daemon.Process.Signal(syscall.SIGCONT)
	}
	for m := range t.ms {
		if t.warmOn(m) {
			t.on(m, "close", "--now", t.id)
		}
	}
	// A killed owner's claim is waited out; a loaded machine's rounds are slow.
	deadline := time.Now().Add(time.Duration(max(t.tp.ttl[0], t.tp.ttl[1])+60) * time.Second)
	last := ""
	for round := 0; ; round++ {
		clean := true
		for _, op := range []string{"pull", "push"} {
			for m := range t.ms {
				if !t.syncOnce(op, m, &clean, &last) {
					return
				}
			}
			if clean && t.sameLogs() {
				return
			}
		}
		fmt.Fprintf(&t.timings, "%6.2fs round %d done (clean %v)\n", time.Since(t.began).Seconds(), round, clean)
		if time.Now().After(deadline) {
			t.r.failf("the machines did not converge in %d rounds (last: %s; logs equal: %v)", round+1, firstLine(last), t.sameLogs())
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// syncOnce runs one push or pull of converge on machine m: a divergence is
// recovered as printed, a live claim or a remote too slow to answer leaves
// the round unclean; false when anything else failed.
func (t *twoTrial) syncOnce(op string, m int, clean *bool, last *string) bool {
	c := t.on(m, op, t.id)
	switch {
	case c.code == 0:
	case c.code == 3 && strings.Contains(c.stderr, "diverged"):
		t.recoverDiverged(m, c.stderr)
		*clean = false
	case c.code == 3 || c.code == 1 && strings.Contains(c.stderr, "did not answer"):
		*clean = false // a live claim (a killed owner's), a takeover seen: again
		*last = op + " on " + machineNames[m] + ": " + c.brief()
	default:
		t.r.failf("%s on %s while converging: %s", op, machineNames[m], c.brief())
	}
	return t.r.pass()
}

// warmOn: a step on machine m left (or may have left) a warm owner.
func (t *twoTrial) warmOn(m int) bool {
	for _, s := range t.tp.steps {
		if s.m == m && s.linger != "" {
			return true
		}
	}
	return false
}

// logOf is machine m's log of the session.
func (t *twoTrial) logOf(m int) []byte {
	b, _ := os.ReadFile(filepath.Join(t.ms[m].home, "sessions", t.id+".jsonl"))
	return b
}

// remoteLog is the log the remote's session commit holds (its chunks in
// order), read in this process: two git commands and one more per chunk,
// on every round of every trial, were a good part of a trial's time.
func (t *twoTrial) remoteLog() []byte {
	st := filesystem.NewStorage(osfs.New(t.bare), cache.NewObjectLRUDefault())
	defer st.Close()
	ref, err := storer.ResolveReference(st, plumbing.ReferenceName("refs/kandev/sessions/"+t.id))
	if err != nil {
		return nil
	}
	commit, err := object.GetCommit(st, ref.Hash())
	if err != nil {
		return nil
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil
	}
	logTree, err := tree.Tree("log")
	if err != nil {
		return nil
	}
	type chunk struct {
		name string
		file *object.File
	}
	var chunks []chunk
	err = logTree.Files().ForEach(func(f *object.File) error {
		chunks = append(chunks, chunk{filepath.Base(f.Name), f})
		return nil
	})
	if err != nil {
		return nil
	}
	sort.Slice(chunks, func(i, j int) bool { return chunks[i].name < chunks[j].name })
	var b []byte
	for _, c := range chunks {
		s, err := c.file.Contents()
		if err != nil {
			return nil
		}
		b = append(b, s...)
	}
	return b
}

func (t *twoTrial) sameLogs() bool {
	a, b := t.logOf(0), t.logOf(1)
	return bytes.Equal(a, b) && bytes.Equal(a, t.remoteLog())
}

// check verifies the invariants on the converged logs.
func (t *twoTrial) check() {
	if !t.r.pass() {
		return
	}
	t.r.land = "converged"
	t.r.outcome = "no divergence"
	if t.refusals > 0 {
		t.r.outcome = "divergence refused and recovered"
		if !t.tp.disrupted() {
			// Neither a kill nor a frozen remote: an owner stalled past its
			// claim (a loaded machine), the expired-claim route.
			t.r.advisories = append(t.r.advisories, "a divergence with no kill and no frozen remote (an owner stalled past its claim?)")
		}
	}
	path := filepath.Join(t.ms[0].home, "sessions", t.id+".jsonl")
	l, err := readLog(path, t.id)
	if err != nil {
		t.r.failf("reading the converged log: %v", err)
		return
	}
	for _, p := range l.probs {
		t.r.failf("converged log: %s", p)
	}
	t.checkTurns(l.events())
	t.checkRefusedStayed()
	shared := string(t.logOf(0))
	for w, m := range t.acked {
		if !strings.Contains(shared, w) && !t.inFork(m, w) {
			t.r.failf("the turn %s acknowledged on %s is in no log: not the shared one, not a fork there", w, machineNames[m])
		}
	}
	for m := range t.ms {
		t.noAgentLeft(m)
	}
}

// checkTurns: never two turns at one log position. Turns follow one
// another (one starts only after the previous one ended, a cut-off one
// being closed by its repair first), and no turn id is used twice.
func (t *twoTrial) checkTurns(evs []event) {
	open := ""
	seen := map[string]bool{}
	for _, e := range evs {
		switch e.Type {
		case evTurnStarted:
			if open != "" {
				t.r.failf("turn %s started at seq %d while turn %s was open: two turns at one log position", e.TurnID, e.Seq, open)
				return
			}
			if seen[e.TurnID] {
				t.r.failf("turn id %s is used twice (seq %d): two machines appended the same turn", e.TurnID, e.Seq)
				return
			}
			open, seen[e.TurnID] = e.TurnID, true
		case evTurnEnded:
			if e.TurnID == open {
				open = ""
			}
		}
	}
}

// checkRefusedStayed: a prompt refused by name runs no turn later: its word
// is in no more turns of any log (the shared one, a fork of a divergence)
// than were acknowledged for it (a frozen remote's prompt is sent again
// with --offline). Seed 20261207 found 17 that did: the refused prompt's
// input stayed queued and the machine's next owner served it.
func (t *twoTrial) checkRefusedStayed() {
	most := map[string]int{}
	for m := range t.ms {
		dir := filepath.Join(t.ms[m].home, "sessions")
		logs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, path := range logs {
			for w, n := range userWords(path) {
				most[w] = max(most[w], n)
			}
		}
	}
	for w, m := range t.refused {
		want := 0
		if _, ok := t.acked[w]; ok {
			want = 1
		}
		if most[w] > want {
			t.r.failf("the prompt %s refused on %s ran later all the same (%d turns)", w, machineNames[m], most[w])
		}
	}
}

// userWords counts the user messages of the log at path by text (without
// the demo agent's /say).
func userWords(path string) map[string]int {
	b, _ := os.ReadFile(path)
	n := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `"user_message"`) {
			continue
		}
		var e event
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "user_message" {
			n[strings.TrimPrefix(e.Content, "/say ")]++
		}
	}
	return n
}

// inFork reports whether a fork of the session on machine m holds w.
func (t *twoTrial) inFork(m int, w string) bool {
	dir := filepath.Join(t.ms[m].home, "sessions")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		rec, _ := os.ReadFile(filepath.Join(dir, name))
		if !strings.Contains(string(rec), `"parent_id":"`+t.id+`"`) && !strings.Contains(string(rec), `"parent_id": "`+t.id+`"`) {
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, ".json")+".jsonl")); strings.Contains(string(b), w) {
			return true
		}
	}
	return false
}

// noAgentLeft: no demo agent of machine m outlives the trial (a killed
// owner's agent ends with its stdin).
func (t *twoTrial) noAgentLeft(m int) {
	clone := t.ms[m].clone
	if c, err := filepath.EvalSymlinks(clone); err == nil {
		clone = c
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := demoAgents(clone)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.r.failf("demo-agent process(es) %v of machine %s still alive at the end", left, machineNames[m])
			for _, pid := range left {
				killPid(pid)
			}
			return
		}
	}
}
