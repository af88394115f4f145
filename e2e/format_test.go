package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/state"
)

// assertNewerRefused checks a refusal: exit 1 and the one line that says to upgrade.
func assertNewerRefused(t *testing.T, r result, what string) {
	t.Helper()
	want := "kandev: " + what + " was written by a newer kandev (format 9); upgrade kandev\n"
	if r.code != 1 || r.stderr != want {
		t.Fatalf("want exit 1 and %q, got %s", want, r)
	}
}

func TestFormat_HomeOfANewerFormatIsRefusedAndLeftAlone(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start("/say hi")
	os.WriteFile(filepath.Join(w.home, "format"), []byte("9\n"), 0o600)
	for _, args := range [][]string{{"list"}, {"status", id}, {"resume", id}, {"start", "/say again"}} {
		assertNewerRefused(t, w.run(args...), "kandev home "+w.home)
	}
	var out struct{ Error struct{ Code string } }
	decodeJSON(t, w.run("--json", "list").stdout, &out)
	if out.Error.Code != "newer_format" {
		t.Fatalf("--json error code %q", out.Error.Code)
	}
	if b, _ := os.ReadFile(filepath.Join(w.home, "format")); string(b) != "9\n" {
		t.Fatalf("format file rewritten: %q", b)
	}
}

func TestFormat_RecordOfANewerFormatIsRefusedAndSkippedByList(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	newer, _ := w.start("--title", "from the future", "/say hi")
	current, _ := w.start("--title", "today", "/say hi")
	recPath := filepath.Join(w.home, "sessions", newer+".json")
	logPath := filepath.Join(w.home, "sessions", newer+".jsonl")
	b, _ := os.ReadFile(recPath)
	rec := strings.Replace(string(b), fmt.Sprintf(`"format": %d,`, state.Format), `"format": 9,`, 1)
	os.WriteFile(recPath, []byte(rec), 0o600)
	logBefore, _ := os.ReadFile(logPath)

	for _, cmd := range []string{"status", "resume", "prompt", "events", "transcript", "recap", "export", "done"} {
		args := []string{cmd, newer}
		if cmd == "prompt" {
			args = append(args, "/say more")
		}
		assertNewerRefused(t, w.run(args...), "session "+newer)
	}
	if b, _ := os.ReadFile(recPath); string(b) != rec {
		t.Fatal("the newer record was rewritten")
	}
	if b, _ := os.ReadFile(logPath); string(b) != string(logBefore) {
		t.Fatal("the newer session's log was appended to")
	}

	r := w.mustRun("list")
	if !strings.Contains(r.stdout, current) || strings.Contains(r.stdout, newer) {
		t.Fatalf("list: %s", r)
	}
	if r.stderr != "warning: 1 session(s) not listed: written by a newer kandev (format 9); upgrade kandev\n" {
		t.Fatalf("list warning: %q", r.stderr)
	}
	var report struct {
		Checks []struct {
			Name, Message, Fix string
			OK                 bool
		}
	}
	decodeJSON(t, w.run("--json", "doctor").stdout, &report)
	found := false
	for _, c := range report.Checks {
		if c.Name == "session "+newer {
			found = !c.OK && strings.Contains(c.Message, "newer kandev (format 9)") && strings.HasPrefix(c.Fix, "upgrade kandev")
		}
	}
	if !found {
		t.Fatalf("doctor does not report the newer record: %+v", report.Checks)
	}
}

func TestEvents_UnknownEventTypeIsKeptCountedAndShownAsStored(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// --linger 0: a line is added to the log by hand, which no live owner expects.
	id, _ := w.start("--linger", "0", "/say before")
	n := len(w.events(id))
	line := fmt.Sprintf(`{"seq":%d,"timestamp":"2030-01-01T00:00:00Z","type":"hologram","session_id":"%s","beam":{"color":"teal"}}`, n+1, id)
	f, _ := os.OpenFile(filepath.Join(w.home, "sessions", id+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line + "\n")
	f.Close()

	r := w.mustRun("--json", "events", id, "--type", "hologram")
	var evs struct{ Events []json.RawMessage }
	decodeJSON(t, r.stdout, &evs)
	if len(evs.Events) != 1 || string(evs.Events[0]) != line {
		t.Fatalf("events --json: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, "1 event(s) of a type this kandev does not know") {
		t.Fatalf("events does not count the unknown event: %q", r.stderr)
	}
	if r := w.mustRun("events", id); !strings.Contains(r.stdout, `(unknown event) `+line[:40]) {
		t.Fatalf("events text: %s", r.stdout)
	}
	if r := w.mustRun("transcript", id); !strings.Contains(r.stdout, "? unknown event hologram") {
		t.Fatalf("transcript: %s", r.stdout)
	}
	if r := w.mustRun("export", id); !strings.Contains(r.stdout, line+"\n") {
		t.Fatalf("export does not carry the unknown event as stored: %s", r.stdout)
	}
	// The log goes on after it.
	w.mustRun("prompt", id, "/say after")
	all := w.events(id)
	assertNoSeqGap(t, all)
	if all[n].Type != "hologram" || !strings.Contains(agentText(all, ""), "after") {
		t.Fatalf("log after the unknown event: %+v", all[n:])
	}
	if s := w.session(id); s.Format != state.Format {
		t.Fatalf("record format %d", s.Format)
	}
}
