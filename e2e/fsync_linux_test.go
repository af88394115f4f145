//go:build linux

package e2e_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// straceLine is one line of strace -f -y: pid, then a call (or the end of
// one strace printed as unfinished).
var straceLine = regexp.MustCompile(`^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$`)

// What a prompt syncs, seen by strace on the real binary: everything the log
// holds is on disk before session/prompt is written to the agent (the
// "sent or not" rule: prompt_sent is durable before the send, and so is
// everything appended before it without a sync of its own), and kandev's
// fsyncs of the session's files stay at the 11 of docs/event-log.md ("What a prompt writes to disk").
func TestDurability_APromptIsOnDiskBeforeItIsSentWithElevenFsyncs(t *testing.T) {
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("SKIP: no strace")
	}
	w := newWorld(t)
	// --linger 0: the traced prompt must own its turn (it says --linger 0
	// too), not queue it for a warm owner the start left.
	id, r := w.start("--linger", "0", "--agent", "demo", "remember plum")
	if r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-y", "-s", "256", "-e", "trace=write,fsync,fdatasync", "-o", trace,
		kandevBin, "prompt", id, "--linger", "0", "/say hello")
	cmd.Dir, cmd.Env = w.cwd, w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("strace kandev prompt: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sessions := filepath.Join(w.home, "sessions") + "/"
	logPath := sessions + id + ".jsonl"
	var (
		fsyncs        int  // fsyncs of the session's files (log, record, the sessions folder)
		unsynced      bool // the log was written since its last fsync
		sent          bool
		sentUnsynced  bool
		sawPromptSent bool
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		call, rest := m[3], m[4]
		if call == "" { // the end of an unfinished call: counted where it began
			continue
		}
		switch call {
		case "fsync", "fdatasync":
			if strings.Contains(rest, "<"+sessions) || strings.Contains(rest, "<"+strings.TrimSuffix(sessions, "/")+">") {
				fsyncs++ // a file of the session, or the folder after a record's rename
			}
			if strings.Contains(rest, "<"+logPath+">") {
				unsynced = false
			}
		case "write":
			if strings.Contains(rest, "<"+logPath+">") {
				unsynced = true
				sawPromptSent = sawPromptSent || strings.Contains(rest, `prompt_sent`)
			}
			if !sent && strings.Contains(rest, `session/prompt`) && strings.Contains(rest, "<pipe:") {
				sent, sentUnsynced = true, unsynced
				if !sawPromptSent {
					t.Error("session/prompt was written to the agent before prompt_sent was in the log")
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !sent {
		t.Fatal("the trace shows no session/prompt written to the agent")
	}
	if sentUnsynced {
		t.Error("session/prompt was written to the agent while the log held events not yet fsync'd")
	}
	if fsyncs != 11 {
		t.Errorf("kandev made %d fsyncs of the session's files for a /say hello prompt, want 11 (docs/event-log.md lists them)", fsyncs)
	}
}
