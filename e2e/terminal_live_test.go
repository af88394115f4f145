//go:build unix

package e2e_test

// A served terminal's output is recorded while the command runs (bounded),
// and the command that follows the turn shows it as it comes: on the
// default path, the turn runs in a warm owner an earlier command left.

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// terminalLive are the terminal's output updates recorded while it ran.
func terminalLive(evs []eventlog.Event) (out string, n int) {
	for _, e := range ofType(evs, eventlog.EventToolCall) {
		if strings.HasPrefix(e.ToolCallID, "terminal-") && e.Content != "" {
			out += e.Content
			n++
		}
	}
	return out, n
}

func TestTerminal_OutputIsRecordedAndShownWhileTheCommandRuns(t *testing.T) {
	t.Parallel()
	w := defaultWorld(t)
	id, r := w.start("hello")
	mustOK(t, r)
	w.closeOnCleanup(id)
	cmd := exec.Command(kandevBin, "prompt", id, "--permissions", "approve-all", "/terminal echo first-line; sleep 4; echo second-line")
	cmd.Dir, cmd.Env = w.cwd, w.env
	stdout, _ := cmd.StdoutPipe()
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	shown := make(chan time.Duration, 1)
	var seen strings.Builder
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.TrimSpace(sc.Text()) == "first-line" { // the output, not the command line
				select {
				case shown <- time.Since(began):
				default:
				}
			}
		}
	}()
	select {
	case d := <-shown:
		if d > 3*time.Second {
			t.Fatalf("the first line was shown only after %s", d)
		}
		live, _ := terminalLive(w.events(id))
		if !strings.Contains(live, "first-line") || len(terminalResults(w.events(id))) != 0 {
			t.Fatalf("while the command runs the log has live output %q and results %+v", live, terminalResults(w.events(id)))
		}
		t.Logf("the terminal's first line was shown %s after the prompt began", d.Round(time.Millisecond))
	case <-time.After(4 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the command's first line was not shown while it ran:\n%s", seen.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("prompt: %v\n%s", err, seen.String())
	}
	evs := w.events(id)
	live, _ := terminalLive(evs)
	res := terminalResults(evs)
	if live != "first-line\nsecond-line\n" || len(res) != 1 || res[0].Content != live {
		t.Fatalf("live output %q, results %+v", live, res)
	}
}

func TestTerminal_LiveOutputIsBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	id, r := w.start("--permissions", "approve-all", "/terminal head -c 300000 /dev/zero | tr '\\0' x; echo; echo END")
	mustOK(t, r)
	evs := w.events(id)
	live, n := terminalLive(evs)
	if len(live) > 64<<10+100 || !strings.Contains(live, "live output stops here") {
		t.Fatalf("%d bytes of live output in %d updates", len(live), n)
	}
	if res := terminalResults(evs); len(res) != 1 || !strings.HasSuffix(strings.TrimSpace(res[0].Content), "END") {
		t.Fatalf("the result does not keep the end: %d results", len(res))
	}
	t.Logf("300,000 bytes printed: %d bytes recorded live in %d updates", len(live), n)
}
