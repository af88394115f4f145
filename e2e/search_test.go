package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

type searchAnswer struct {
	Results []struct {
		SessionID      string    `json:"session_id"`
		Seq            int64     `json:"seq"`
		Type           string    `json:"type"`
		Snippet        string    `json:"snippet"`
		Title          string    `json:"title"`
		LastActivityAt time.Time `json:"last_activity_at"`
		Rewound        bool      `json:"rewound"`
	} `json:"results"`
}

// search runs kandev --json search and decodes its answer.
func (w *world) search(args ...string) (searchAnswer, result) {
	w.t.Helper()
	r := w.run(append([]string{"--json", "search"}, args...)...)
	var a searchAnswer
	decodeJSON(w.t, r.stdout, &a)
	return a, r
}

func (w *world) mustStart(args ...string) string {
	w.t.Helper()
	id, r := w.start(args...)
	if r.code != 0 {
		w.t.Fatal(r)
	}
	return id
}

func TestSearch_FindsMessagesThoughtsAndToolsNewestFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.cwd, "lexer.txt"), []byte("the lexer reads tokens\n"), 0o644)
	older := w.mustStart("--title", "older", "/say the lexer is fixed")
	newer := w.mustStart("--title", "newer", "/think about the lexer\n/read lexer.txt")
	a, r := w.search("LEXER", "--limit", "0")
	if r.code != 0 {
		t.Fatal(r)
	}
	var got []string
	for _, h := range a.Results {
		got = append(got, h.SessionID[len(h.SessionID)-4:]+" "+h.Type)
		if !strings.Contains(strings.ToLower(h.Snippet), "lexer") {
			t.Errorf("snippet %q does not show the match", h.Snippet)
		}
	}
	// newest session first; in it, newest event first
	want := []string{
		newer[len(newer)-4:] + " agent_message", newer[len(newer)-4:] + " tool_result", newer[len(newer)-4:] + " tool_call", newer[len(newer)-4:] + " agent_thought", newer[len(newer)-4:] + " user_message",
		older[len(older)-4:] + " agent_message", older[len(older)-4:] + " user_message",
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("hits\n%v\nwant\n%v\n%s", got, want, r)
	}
	for i := 1; i < len(a.Results); i++ {
		if p, h := a.Results[i-1], a.Results[i]; p.SessionID == h.SessionID && p.Seq <= h.Seq {
			t.Fatalf("seq not descending within a session: %d then %d", p.Seq, h.Seq)
		}
	}
	if a.Results[0].Title != "newer" || a.Results[0].LastActivityAt.IsZero() {
		t.Fatalf("hit without the session's title or activity: %+v", a.Results[0])
	}
	// Text mode names the command that shows the hit in context.
	txt := w.mustRun("search", "lexer", "--limit", "1")
	if !strings.Contains(txt.stdout, "kandev transcript "+newer+" --before ") || strings.Contains(txt.stdout, "\x1b[") {
		t.Fatalf("text answer without the context command, or with colours off a terminal:\n%s", txt)
	}
}

func TestSearch_FindsAMatchSplitAcrossStreamedChunks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// /say streams its text in four chunks: "abcdefghijkl" "mnopqrstuvwx" ...
	id := w.mustStart("/say abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL")
	chunks := ofType(w.events(id), eventlog.EventAgentMessage)
	if len(chunks) < 2 || strings.Contains(chunks[0].Content, "klmn") || strings.Contains(chunks[1].Content, "klmn") {
		t.Fatalf("the test needs klmn split across chunks: %+v", chunks)
	}
	a, r := w.search("KLMN") // newest first: the answer, then the prompt
	if r.code != 0 || len(a.Results) != 2 || a.Results[0].Type != eventlog.EventAgentMessage || a.Results[0].Seq != chunks[0].Seq {
		t.Fatalf("want one agent_message hit at seq %d (where the match starts): %s", chunks[0].Seq, r)
	}
	if !strings.Contains(a.Results[0].Snippet, "abcdefghijklmnopqrstuvwxyz") {
		t.Fatalf("snippet is not the assembled message: %q", a.Results[0].Snippet)
	}
}

func TestSearch_NeverShowsASecret(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.cwd, "deploy.txt"), []byte("deploy notes: password=hunter2hunter2 for prod\n"), 0o644)
	// a token streamed in four chunks: no chunk alone looks like a secret
	w.mustStart("/read deploy.txt\n/say deploy with ghp_abcdefghijklmnopqrstuvwxyz0123456789 now")
	for _, args := range [][]string{{"deploy", "--limit", "0"}, {"--regex", "ghp_[a-z]+", "--limit", "0"}, {"password"}, {"with"}} {
		r := w.run(append([]string{"search"}, args...)...)
		j := w.run(append([]string{"--json", "search"}, args...)...)
		for _, out := range []string{r.stdout, r.stderr, j.stdout, j.stderr} {
			if strings.Contains(out, "hunter2") || strings.Contains(out, "abcdefghijklmn") {
				t.Fatalf("search %v shows a secret:\n%s\n%s", args, r, j)
			}
		}
	}
	if a, r := w.search("hunter2"); r.code != 1 || len(a.Results) != 0 {
		t.Fatalf("the secret itself is not in any searched text: %s", r)
	}
	a, _ := w.search("deploy", "--limit", "0")
	if len(a.Results) != 4 || !strings.Contains(a.Results[0].Snippet, "with [REDACTED] now") || !strings.Contains(a.Results[1].Snippet, "password=[REDACTED]") {
		t.Fatalf("want the message, the tool result, its call and the prompt, secrets redacted: %+v", a.Results)
	}
}

func TestSearch_SkipsACorruptLineAndGoesOn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.mustStart("/say the parser is fine")
	w.mustRun("prompt", id, "/say the parser is still fine")
	path := filepath.Join(w.home, "sessions", id+".jsonl")
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	mid := len(lines) / 2
	lines = append(lines[:mid], append([]string{`{"seq":99,"type":"user_message","content":"the parser was here` + "\n"}, lines[mid:]...)...)
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)
	a, r := w.search("parser", "--limit", "0")
	if r.code != 0 || len(a.Results) != 4 {
		t.Fatalf("want both turns' prompt and answer despite the corrupt line: %s", r)
	}
	if !strings.Contains(r.stderr, "skipped 1 corrupt line") {
		t.Fatalf("the corrupt line is not reported: %s", r)
	}
}

func TestSearch_Filters(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agents.other]\ncommand = [\"" + kandevBin + "\", \"demo-agent\"]\n")
	a1 := w.mustStart("--workspace", "alpha", "/say needle one")
	a2 := w.mustStart("--workspace", "beta", "--agent", "other", "/say needle two")
	a3 := w.mustStart("--workspace", "beta", "/say needle three")
	h, _ := state.OpenHome(w.home)
	if _, err := h.UpdateSession(a1, func(s *state.Session) error { s.LastActivityAt = time.Now().Add(-72 * time.Hour); return nil }); err != nil {
		t.Fatal(err)
	}
	sessions := func(args ...string) string {
		a, r := w.search(append([]string{"needle", "--limit", "0"}, args...)...)
		seen := map[string]bool{}
		var ids []string
		for _, h := range a.Results {
			if !seen[h.SessionID] {
				seen[h.SessionID] = true
				ids = append(ids, h.SessionID)
			}
		}
		if len(ids) == 0 && r.code != 1 {
			t.Errorf("no hits but exit %d", r.code)
		}
		return strings.Join(ids, ",")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, a3 + "," + a2 + "," + a1},
		{[]string{"--workspace", "beta"}, a3 + "," + a2},
		{[]string{"--agent", "other"}, a2},
		{[]string{"--since", "1d"}, a3 + "," + a2},
		{[]string{"--since", "4d"}, a3 + "," + a2 + "," + a1},
		{[]string{"--workspace", "gamma"}, ""},
	} {
		if got := sessions(tc.args...); got != tc.want {
			t.Errorf("search needle %v: sessions %s, want %s", tc.args, got, tc.want)
		}
	}
	if a, r := w.search("needle", "--limit", "2"); len(a.Results) != 2 || r.code != 0 {
		t.Errorf("--limit 2: %s", r)
	}
	// the answers "needle one" and "needle two", not the prompts "/say needle ..."
	if a, r := w.search("--regex", `^needle (one|two)$`, "--limit", "0"); len(a.Results) != 2 || a.Results[0].SessionID != a2 || a.Results[1].SessionID != a1 {
		t.Errorf("--regex: %s", r)
	}
	if a, r := w.search("--regex", `^/say needle t`, "--limit", "0"); len(a.Results) != 2 || a.Results[0].Type != eventlog.EventUserMessage {
		t.Errorf("--regex: %s", r)
	}
	if _, r := w.search("--regex", `needle (`); r.code != 2 {
		t.Errorf("a bad regular expression is a usage error: %s", r)
	}
	if a, r := w.search("haystack"); r.code != 1 || len(a.Results) != 0 || !strings.Contains(r.stderr, "no match") {
		t.Errorf("nothing found: want exit 1 and an empty list, got %s", r)
	}
}

func TestSearch_MarksWhatARewindTookOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.mustStart("/say the walrus sings")
	w.mustRun("clear", id)
	w.mustRun("prompt", id, "/say the walrus again")
	a, r := w.search("walrus", "--limit", "0")
	var rewound []bool
	for _, h := range a.Results {
		rewound = append(rewound, h.Rewound)
	}
	// newest first: this epoch's answer and prompt, then the cleared ones
	if r.code != 0 || fmt.Sprint(rewound) != "[false false true true]" {
		t.Fatalf("rewound flags %v, want [false false true true]: %s", rewound, r)
	}
	txt := w.mustRun("search", "walrus", "--limit", "0")
	if strings.Count(txt.stdout, "--all-epochs --before") != 2 {
		t.Fatalf("the cleared hits should point to transcript --all-epochs:\n%s", txt)
	}
}
