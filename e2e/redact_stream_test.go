package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
)

// Real agents stream a few tokens per chunk: every planted secret is streamed
// in chunks of 1 to 7 bytes, so no chunk holds enough of it to be caught on
// its own. It must appear in no view, no event, no export and no log line,
// nor in what the prompt printed while the turn ran.
func TestRedaction_SecretStreamedInSmallChunksAppearsNowhere(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secrets := plantedSecrets()
	var prompt []string
	for i, line := range secretLines(secrets) {
		prompt = append(prompt, fmt.Sprintf("/stream %d %s", []int{1, 2, 3, 5, 7, 4}[i], line))
	}
	id, r := w.start(strings.Join(prompt, "\n"))
	if r.code != 0 {
		t.Fatal(r)
	}
	evs := w.events(id)
	chunks := ofType(evs, eventlog.EventAgentMessage)
	// A chunk whose text is all held back goes out with the one that
	// releases it: about one event per word here, not one per line.
	if lines := len(secretLines(secrets)); len(chunks) < 2*lines {
		t.Fatalf("%d agent_message events for %d streamed lines: the chunks were merged", len(chunks), lines)
	}
	outputs := map[string]string{"start output": r.stdout + r.stderr}
	outputs["log file"] = string(readMust(os.ReadFile(filepath.Join(w.home, "sessions", id+".jsonl"))))
	for name, args := range map[string][]string{
		"transcript":      {"--json", "transcript", id},
		"transcript text": {"transcript", id},
		"recap":           {"--json", "recap", id},
		"recap text":      {"recap", id},
		"events":          {"--json", "events", id},
		"events text":     {"events", id},
		"export":          {"export", id},
	} {
		outputs[name] = w.mustRun(args...).stdout
	}
	for what, out := range outputs {
		for name, secret := range secrets {
			if strings.Contains(out, secret) {
				t.Errorf("the %s secret appears in the %s", name, what)
			}
		}
	}
	// What the agent said is all there, with each secret cut out whole.
	want := history.Redact(strings.Join(secretLines(secrets), "\n"))
	if got := agentText(evs, lastTurn(evs)); got != want {
		t.Errorf("the streamed chunks concatenate to\n%q\nwant\n%q", got, want)
	}
	for _, s := range []string{"token for ci: " + history.Redacted, "Authorization: " + history.Redacted, "api_key=" + history.Redacted} {
		if !strings.Contains(outputs["transcript text"], s) {
			t.Errorf("the transcript lacks %q:\n%s", s, outputs["transcript text"])
		}
	}
}
