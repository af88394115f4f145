package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

)

// boardHome fills the world's home with a session in every column of the
// board, and a record cut off mid-write; it returns the ids by title.
func boardHome(t *testing.T, w *world) map[string]string {
	t.Helper()
	w.config("[agents.broken]\ncommand = [\"/nonexistent/agent\"]\n")
	ids := map[string]string{}
	// First: making an interrupted turn kills every process of the home.
	ids["crashed"] = w.mustStart("--title", "crashed", "--linger", "0")
	w.crashMidTurn(ids["crashed"])
	ids["broken"], _ = w.start("--title", "broken", "--agent", "broken")
	ids["idle"] = w.mustStart("--title", "idle", "--linger", "0", "/say hello")
	ids["finished"] = w.mustStart("--title", "finished", "--linger", "0")
	w.mustRun("done", ids["finished"])
	if r := w.run("--permissions", "defer", "start", "--title", "wants to write", "/write out.txt from the board"); r.code != 7 {
		t.Fatalf("a parked write exits 7: %s", r)
	}
	ids["wants to write"] = w.onlyNew(ids)
	ids["busy"] = w.mustStart("--title", "busy", "--linger", "0")
	w.busyTurnWith(ids["busy"], "/say working\n/sleep 30000")
	torn := filepath.Join(w.home, "sessions", "20261207-000000-deadbeef.json")
	if err := os.WriteFile(torn, []byte(`{"format": 1, "id": "20261207-0000`), 0o600); err != nil {
		t.Fatal(err)
	}
	return ids
}

// onlyNew is the one session of the home not among known.
func (w *world) onlyNew(known map[string]string) string {
	w.t.Helper()
	for _, id := range w.sessions() {
		found := false
		for _, k := range known {
			found = found || k == id
		}
		if !found {
			return id
		}
	}
	w.t.Fatal("no new session")
	return ""
}

// normalBoard is board text with what changes from run to run replaced:
// ids, the workspace's name, ages and times of day; cells one space apart.
func normalBoard(w *world, text string) string {
	text = regexp.MustCompile(`\d{8}-\d{6}-[0-9a-f]{8}`).ReplaceAllString(text, "ID")
	text = regexp.MustCompile(`\b`+regexp.QuoteMeta(filepath.Base(w.cwd))+`\b`).ReplaceAllString(text, "WS")
	text = strings.ReplaceAll(text, w.home, "HOME")
	text = regexp.MustCompile(`\b\d+[smhd]\b`).ReplaceAllString(text, "AGE")
	text = regexp.MustCompile(`\b\d\d:\d\d\b`).ReplaceAllString(text, "HH:MM")
	return regexp.MustCompile(`  +`).ReplaceAllString(text, "  ")
}

const boardOnceGolden = `Needs you (3)
  ID  permission: Write out.txt  demo  WS  AGE  -  wants to write
  ID  failed: agent not installed: /nonexistent/agent was not found on PA…  broken  WS  AGE  -  broken
  ID  unreadable record  -  -  -  -  session record HOME/sessions/ID.json is corrupt: unexpected end of JSON input; run kandev doctor
Running (1)
  ID  running  demo  WS  AGE  -  busy
Needs resume (1)
  ID  needs-resume  demo  WS  AGE  -  crashed
Warm / idle (1)
  ID  idle  demo  WS  AGE  $0.001  idle
Done (1)
  ID  done  demo  WS  AGE  -  finished
`

func TestBoard_OnceShowsASessionInEveryColumnAsText(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	boardHome(t, w)
	r := w.mustRun("board", "--once")
	if got := normalBoard(w, r.stdout); got != boardOnceGolden {
		t.Fatalf("kandev board --once:\n%s\nwant:\n%s\n(as printed:\n%s)", got, boardOnceGolden, r.stdout)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Fatal("escape sequences in --once output that is not a terminal")
	}
	var j struct {
		Columns []struct {
			Column   string
			Sessions []struct{ ID, Badge, Problem string }
		}
	}
	decodeJSON(t, w.mustRun("--json", "board", "--once").stdout, &j)
	var cols []string
	for _, c := range j.Columns {
		cols = append(cols, c.Column+":"+strconv.Itoa(len(c.Sessions)))
	}
	if got := strings.Join(cols, " "); got != "needs_you:3 running:1 needs_resume:1 warm_idle:1 done:1" {
		t.Fatalf("--json columns: %s", got)
	}
}
