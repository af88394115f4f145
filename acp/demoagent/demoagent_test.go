package demoagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// toolEvents summarises tool_call and tool_call_update updates.
func toolEvents(us []acp.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		switch {
		case u.ToolCall != nil:
			tc := u.ToolCall
			var locs []string
			for _, l := range tc.Locations {
				locs = append(locs, filepath.Base(l.Path))
			}
			in, _ := json.Marshal(tc.RawInput)
			out = append(out, fmt.Sprintf("%s %s %s %q %s %v", tc.ToolCallId, tc.Kind, tc.Status, tc.Title, in, locs))
		case u.ToolCallUpdate != nil:
			tu := u.ToolCallUpdate
			var texts []string
			for _, c := range tu.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					texts = append(texts, c.Content.Content.Text.Text)
				}
			}
			status := "-"
			if tu.Status != nil {
				status = string(*tu.Status)
			}
			out = append(out, fmt.Sprintf("%s %s %q", tu.ToolCallId, status, texts))
		}
	}
	return out
}

func TestInitializeAdvertises(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         Options
		load, resume bool
	}{
		{"default", Options{}, true, true},
		{"no load", Options{NoLoad: true}, false, true},
		{"no resume", Options{NoResume: true}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Dir = t.TempDir()
			p := start(t, tc.opts, newClient(true))
			got := p.init
			if got.ProtocolVersion != 1 {
				t.Errorf("protocolVersion = %d, want 1", got.ProtocolVersion)
			}
			if got.AgentInfo == nil || got.AgentInfo.Name != "kandev-demo-agent" || got.AgentInfo.Version != "0.1.0" {
				t.Errorf("agentInfo = %+v", got.AgentInfo)
			}
			if got.AuthMethods == nil || len(got.AuthMethods) != 0 {
				t.Errorf("authMethods = %#v, want empty list", got.AuthMethods)
			}
			if got.AgentCapabilities.LoadSession != tc.load {
				t.Errorf("loadSession = %v, want %v", got.AgentCapabilities.LoadSession, tc.load)
			}
			if r := got.AgentCapabilities.SessionCapabilities.Resume; (r != nil) != tc.resume {
				t.Errorf("sessionCapabilities.resume = %v, want present=%v", r, tc.resume)
			}
			if _, err := p.Authenticate(ctx(t), acp.AuthenticateRequest{MethodId: "none"}); err != nil {
				t.Errorf("authenticate: %v", err)
			}
		})
	}
}

func TestDirectives(t *testing.T) {
	type tcase struct {
		name    string
		prompt  string
		reject  bool     // answer the permission request with "reject"
		agent   string   // exact concatenated agent text
		thought string   // exact concatenated thought text
		tools   []string // toolEvents, "CWD" standing for the session cwd
		check   func(t *testing.T, cwd string, us []acp.SessionUpdate)
	}
	history := strings.Join([]string{
		"Here is our earlier conversation:",
		"[USER]: remember PINEAPPLE",
		"[AGENT]: OK, I will remember PINEAPPLE.",
		"[USER]: recall",
		"[AGENT]: I remember nothing.",
		"recall",
	}, "\n")
	cases := []tcase{
		{name: "echo", prompt: "hello there", agent: "echo: hello there"},
		{name: "remember", prompt: "remember PINEAPPLE", agent: "OK, I will remember PINEAPPLE."},
		{name: "recall nothing", prompt: "recall", agent: "I remember nothing."},
		{
			name:   "recall dedupes in order",
			prompt: "remember A\nremember B\nremember A\nrecall",
			agent:  "OK, I will remember A.\nOK, I will remember B.\nOK, I will remember A.\nYou asked me to remember: A, B.",
		},
		{
			name:   "recall ignores later lines",
			prompt: "recall\nremember LATER",
			agent:  "I remember nothing.\nOK, I will remember LATER.",
		},
		{
			name:   "recall finds injected history",
			prompt: history,
			check: func(t *testing.T, _ string, us []acp.SessionUpdate) {
				if got := agentText(us); !strings.HasSuffix(got, "\nYou asked me to remember: PINEAPPLE.") {
					t.Errorf("agent text = %q", got)
				}
			},
		},
		{
			name:   "say streams chunks",
			prompt: "/say The quick brown fox jumps over the lazy dog",
			agent:  "The quick brown fox jumps over the lazy dog",
			check: func(t *testing.T, _ string, us []acp.SessionUpdate) {
				if n := countAgentChunks(us); n < 3 || n > 4 {
					t.Errorf("%d chunks, want 3-4", n)
				}
			},
		},
		{
			name:   "say keeps runes whole",
			prompt: "/say héllo wörld ✓✓",
			agent:  "héllo wörld ✓✓",
			check: func(t *testing.T, _ string, us []acp.SessionUpdate) {
				for _, u := range us {
					if s := agentText([]acp.SessionUpdate{u}); !utf8.ValidString(s) {
						t.Errorf("chunk %q is not valid UTF-8", s)
					}
				}
			},
		},
		{
			name:   "stream cuts the text in chunks of the given size",
			prompt: "/stream 3 token: ab✓cdefg",
			agent:  "token: ab✓cdefg",
			check: func(t *testing.T, _ string, us []acp.SessionUpdate) {
				var chunks []string
				for _, u := range us {
					if s := agentText([]acp.SessionUpdate{u}); s != "" {
						chunks = append(chunks, s)
					}
				}
				if want := []string{"tok", "en:", " ab", "✓", "cde", "fg"}; !reflect.DeepEqual(chunks, want) {
					t.Errorf("chunks %q, want %q", chunks, want)
				}
			},
		},
		{name: "stream without a size echoes", prompt: "/stream x hello", agent: "echo: /stream x hello"},
		{name: "think", prompt: "/think pondering the question", thought: "pondering the question"},
		{name: "sleep", prompt: "/sleep 20\nawake", agent: "echo: awake"},
		{name: "bulk", prompt: "/bulk 3", agent: "chunk 1\nchunk 2\nchunk 3\n"},
		{name: "malformed directives echo", prompt: "/sleep soon\n/bulk -2\nremember", agent: "echo: /sleep soon\necho: /bulk -2\necho: remember"},
		{name: "blank lines skipped", prompt: "\n  one  \n\n\ttwo\r\n", agent: "echo: one\necho: two"},
		{
			name:   "read",
			prompt: "/read notes.txt",
			agent:  "Read 10 bytes from notes.txt.",
			tools: []string{
				`call-1 read pending "Read notes.txt" {"path":"notes.txt"} [notes.txt]`,
				`call-1 completed ["hello file"]`,
			},
		},
		{
			name:   "read missing file",
			prompt: "/read missing.txt",
			check: func(t *testing.T, _ string, us []acp.SessionUpdate) {
				ev := toolEvents(us)
				if len(ev) != 2 || !strings.HasPrefix(ev[1], "call-1 failed") || !strings.Contains(ev[1], "no such file") {
					t.Errorf("tool events = %q", ev)
				}
				if got := agentText(us); !strings.HasPrefix(got, "Could not read missing.txt: ") {
					t.Errorf("agent text = %q", got)
				}
			},
		},
		{
			name:   "write allowed",
			prompt: "/write out.txt hello world",
			agent:  "Wrote 11 bytes to out.txt.",
			tools: []string{
				`call-1 edit pending "Write out.txt" {"content":"hello world","path":"out.txt"} [out.txt]`,
				`call-1 completed ["Wrote 11 bytes."]`,
			},
			check: func(t *testing.T, cwd string, _ []acp.SessionUpdate) {
				if b, err := os.ReadFile(filepath.Join(cwd, "out.txt")); err != nil || string(b) != "hello world" {
					t.Errorf("out.txt = %q, %v", b, err)
				}
			},
		},
		{
			name:   "write rejected",
			prompt: "/write out.txt hello",
			reject: true,
			agent:  "Permission denied: out.txt was not written.",
			tools: []string{
				`call-1 edit pending "Write out.txt" {"content":"hello","path":"out.txt"} [out.txt]`,
				`call-1 failed ["Permission denied"]`,
			},
			check: func(t *testing.T, cwd string, _ []acp.SessionUpdate) {
				if _, err := os.Stat(filepath.Join(cwd, "out.txt")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("out.txt exists after a rejection: %v", err)
				}
			},
		},
		{
			name:   "tool call ids are unique",
			prompt: "/read notes.txt\n/read notes.txt",
			check: func(t *testing.T, _ string, us []acp.SessionUpdate) {
				ev := toolEvents(us)
				if len(ev) != 4 || !strings.HasPrefix(ev[0], "call-1 ") || !strings.HasPrefix(ev[2], "call-2 ") {
					t.Errorf("tool events = %q", ev)
				}
			},
		},
	}

	allow, reject := newClient(true), newClient(false)
	dir := t.TempDir()
	peers := map[bool]*peer{false: start(t, Options{Dir: dir}, allow), true: start(t, Options{Dir: dir}, reject)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("hello file"), 0o600); err != nil {
				t.Fatal(err)
			}
			p := peers[tc.reject]
			stop, us := p.prompt(t, p.newSession(t, cwd), tc.prompt)
			if stop != acp.StopReasonEndTurn {
				t.Errorf("stopReason = %q", stop)
			}
			if tc.check == nil || tc.agent != "" {
				if got := agentText(us); got != tc.agent {
					t.Errorf("agent text = %q, want %q", got, tc.agent)
				}
			}
			if got := thoughtText(us); got != tc.thought {
				t.Errorf("thought text = %q, want %q", got, tc.thought)
			}
			if tc.tools != nil {
				if got := toolEvents(us); !reflect.DeepEqual(got, tc.tools) {
					t.Errorf("tool events:\n got %q\nwant %q", got, tc.tools)
				}
			}
			if tc.check != nil {
				tc.check(t, cwd, us)
			}
		})
	}

	t.Run("permission request", func(t *testing.T) {
		p := peers[false]
		p.client.mu.Lock()
		p.client.permissions = nil
		p.client.mu.Unlock()
		p.prompt(t, p.newSession(t, t.TempDir()), "/write a.txt x")
		p.client.mu.Lock()
		defer p.client.mu.Unlock()
		if len(p.client.permissions) != 1 {
			t.Fatalf("%d permission requests, want 1", len(p.client.permissions))
		}
		req := p.client.permissions[0]
		want := []acp.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "allow_always", Name: "Always allow writes", Kind: acp.PermissionOptionKindAllowAlways},
			{OptionId: "reject", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		}
		if !reflect.DeepEqual(req.Options, want) {
			t.Errorf("options = %+v", req.Options)
		}
		if req.ToolCall.ToolCallId != "call-1" || req.ToolCall.Title == nil || *req.ToolCall.Title != "Write a.txt" {
			t.Errorf("toolCall = %+v", req.ToolCall)
		}
	})

	t.Run("text blocks join on line boundaries", func(t *testing.T) {
		p := peers[false]
		id := p.newSession(t, t.TempDir())
		resp, err := p.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{
			acp.TextBlock("[USER]: remember KIWI"), acp.ResourceLinkBlock("x", "file:///x"), acp.TextBlock("recall"),
		}})
		us := p.client.take()
		if err != nil || resp.StopReason != acp.StopReasonEndTurn {
			t.Fatalf("prompt: %v %v", resp.StopReason, err)
		}
		if got, want := agentText(us), "echo: [USER]: remember KIWI\nYou asked me to remember: KIWI."; got != want {
			t.Errorf("agent text = %q, want %q", got, want)
		}
	})
}

func TestPersistenceAcrossRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-agent")
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("hello file"), 0o600); err != nil {
		t.Fatal(err)
	}

	// First run: a new session remembers a word.
	p := start(t, Options{Dir: dir}, newClient(true))
	id := p.newSession(t, cwd)
	p.prompt(t, id, "remember PINEAPPLE")
	_, sent := p.prompt(t, id, "/read notes.txt\n/say all done here\n/think hmm")
	// The usage report that ends the turn is live news, not part of the conversation: never replayed.
	original := sent[:len(sent)-1]
	if sent[len(sent)-1].UsageUpdate == nil {
		t.Fatalf("the turn did not end with a usage_update: %s", mustJSON(t, sent[len(sent)-1:]))
	}
	if err := p.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	file := filepath.Join(dir, string(id)+".json")
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("session file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	var sf sessionFile
	if b, err := os.ReadFile(file); err != nil || json.Unmarshal(b, &sf) != nil {
		t.Fatalf("read session file: %v", err)
	}
	if sf.Cwd != cwd || len(sf.Entries) == 0 || !reflect.DeepEqual(sf.Entries[0], entry{Role: roleUser, Text: "remember PINEAPPLE"}) {
		t.Errorf("session file = %+v", sf)
	}
	if ms, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(ms) != 0 {
		t.Errorf("temp files left behind: %v", ms)
	}

	// Second run: resume without replay, then recall.
	p = start(t, Options{Dir: dir}, newClient(true))
	if _, err := p.ResumeSession(ctx(t), acp.ResumeSessionRequest{SessionId: id, Cwd: cwd}); err != nil {
		t.Fatalf("session/resume: %v", err)
	}
	if us := p.client.take(); len(us) != 0 {
		t.Errorf("resume sent %d updates, want none", len(us))
	}
	if _, us := p.prompt(t, id, "recall"); agentText(us) != "You asked me to remember: PINEAPPLE." {
		t.Errorf("recall after resume = %q", agentText(us))
	}
	if err := p.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}

	// Third run, without resume: load replays everything before answering.
	p = start(t, Options{Dir: dir, NoResume: true}, newClient(true))
	if _, err := p.LoadSession(ctx(t), acp.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	replayed := p.client.take()
	var users []string
	for _, u := range replayed {
		if u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	if want := []string{"remember PINEAPPLE", "/read notes.txt\n/say all done here\n/think hmm", "recall"}; !reflect.DeepEqual(users, want) {
		t.Errorf("replayed user messages = %q, want %q", users, want)
	}
	// The second turn must come back exactly as it was first sent.
	second := replayed[3 : 3+len(original)]
	if a, b := mustJSON(t, second), mustJSON(t, original); a != b {
		t.Errorf("replay differs from the original turn:\n got %s\nwant %s", a, b)
	}
	if _, us := p.prompt(t, id, "recall"); agentText(us) != "You asked me to remember: PINEAPPLE." {
		t.Errorf("recall after load = %q", agentText(us))
	}
	if _, us := p.prompt(t, id, "/read notes.txt"); !strings.HasPrefix(toolEvents(us)[0], "call-2 ") {
		t.Errorf("tool call ids restart after load: %q", toolEvents(us))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRefusals(t *testing.T) {
	var re *acp.RequestError
	wantCode := func(t *testing.T, what string, err error, code int, msg string) {
		t.Helper()
		if !errors.As(err, &re) || re.Code != code || (msg != "" && re.Message != msg) {
			t.Errorf("%s: got %v, want code %d %q", what, err, code, msg)
		}
	}
	load := func(p *peer, id acp.SessionId) error {
		_, err := p.LoadSession(ctx(t), acp.LoadSessionRequest{SessionId: id, Cwd: "/", McpServers: []acp.McpServer{}})
		return err
	}
	resume := func(p *peer, id acp.SessionId) error {
		_, err := p.ResumeSession(ctx(t), acp.ResumeSessionRequest{SessionId: id, Cwd: "/"})
		return err
	}

	dir := t.TempDir()
	seed := start(t, Options{Dir: dir}, newClient(true))
	id := seed.newSession(t, "/")

	t.Run("unknown session", func(t *testing.T) {
		p := start(t, Options{Dir: dir}, newClient(true))
		for _, bad := range []acp.SessionId{"demo-0000000000000000", "../../etc/passwd", ""} {
			msg := "Resource not found: session " + string(bad)
			wantCode(t, "load", load(p, bad), -32002, msg)
			wantCode(t, "resume", resume(p, bad), -32002, msg)
			_, err := p.Prompt(ctx(t), acp.PromptRequest{SessionId: bad, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
			wantCode(t, "prompt", err, -32002, msg)
		}
		// A session on disk is unknown to a new run until loaded or resumed.
		_, err := p.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
		wantCode(t, "prompt before resume", err, -32002, "")
	})
	t.Run("no load", func(t *testing.T) {
		p := start(t, Options{Dir: dir, NoLoad: true}, newClient(true))
		wantCode(t, "load", load(p, id), -32601, "")
		if err := resume(p, id); err != nil {
			t.Errorf("resume: %v", err)
		}
	})
	t.Run("no resume", func(t *testing.T) {
		p := start(t, Options{Dir: dir, NoResume: true}, newClient(true))
		wantCode(t, "resume", resume(p, id), -32601, "")
		if err := load(p, id); err != nil {
			t.Errorf("load: %v", err)
		}
	})
	t.Run("fail on resume", func(t *testing.T) {
		p := start(t, Options{Dir: dir, FailOnResume: true}, newClient(true))
		msg := "Resource not found: session " + string(id)
		wantCode(t, "load", load(p, id), -32002, msg)
		wantCode(t, "resume", resume(p, id), -32002, msg)
	})
	t.Run("unknown mode", func(t *testing.T) {
		_, err := seed.SetSessionMode(ctx(t), acp.SetSessionModeRequest{SessionId: id, ModeId: "x"})
		wantCode(t, "session/set_mode", err, -32602, "")
	})
}

func TestCancelDuringSleep(t *testing.T) {
	p := start(t, Options{Dir: t.TempDir()}, newClient(true))
	id := p.newSession(t, t.TempDir())
	p.client.take()
	type result struct {
		resp acp.PromptResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := p.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("/say going to sleep\n/sleep 10000\nawake")}})
		done <- result{resp, err}
	}()
	// The /say chunks arrive just before the sleep starts.
	for deadline := time.Now().Add(5 * time.Second); agentTextSoFar(p.client) != "going to sleep"; {
		if time.Now().After(deadline) {
			t.Fatalf("turn did not start; agent text so far %q", agentTextSoFar(p.client))
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	if err := p.Cancel(ctx(t), acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.resp.StopReason != acp.StopReasonCancelled {
			t.Fatalf("prompt = %+v, %v; want stopReason cancelled", r.resp, r.err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("cancel took %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("prompt did not stop after session/cancel")
	}
	// The session stays usable.
	if _, us := p.prompt(t, id, "remember X\nrecall"); !strings.HasSuffix(agentText(us), "You asked me to remember: X.") {
		t.Errorf("turn after cancel: %q", agentText(us))
	}
}

func agentTextSoFar(c *testClient) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return agentText(c.updates)
}

func TestBulkAndReplay(t *testing.T) {
	n := 100_000
	if testing.Short() { // the race run: the full size is covered end to end
		n = 10_000
	}
	dir := t.TempDir()
	p := start(t, Options{Dir: dir}, newClient(true))
	id := p.newSession(t, t.TempDir())
	stop, us := p.prompt(t, id, fmt.Sprintf("/bulk %d", n))
	if stop != acp.StopReasonEndTurn || len(us) != n+1 || us[n].UsageUpdate == nil {
		t.Fatalf("stopReason %q with %d updates, want %d chunks and a usage_update", stop, len(us), n)
	}
	if used := us[n].UsageUpdate.Used; used != 2*n+2 {
		t.Errorf("usage after /bulk %d: used %d words, want %d", n, used, 2*n+2)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if got, want := us[i].AgentMessageChunk.Content.Text.Text, bulkChunk(i+1); got != want {
			t.Errorf("chunk %d = %q, want %q", i, got, want)
		}
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}

	p = start(t, Options{Dir: dir}, newClient(true))
	if _, err := p.LoadSession(ctx(t), acp.LoadSessionRequest{SessionId: id, Cwd: "/", McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if got := countAgentChunks(p.client.take()); got != n {
		t.Errorf("replayed %d agent chunks, want %d", got, n)
	}
}

func TestCrashExits(t *testing.T) {
	codes := make(chan int, 1)
	exit = func(code int) { codes <- code }
	t.Cleanup(func() { exit = os.Exit })

	dir := t.TempDir()
	p := start(t, Options{Dir: dir}, newClient(true))
	id := p.newSession(t, t.TempDir())
	_, err := p.Prompt(ctx(t), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("/crash")}})
	if err == nil {
		t.Error("prompt answered normally after /crash")
	}
	if got := agentText(p.client.take()); got != "crashing now" {
		t.Errorf("agent text = %q, want %q", got, "crashing now")
	}
	if code := <-codes; code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	// The prompt was saved before the turn started.
	sf, err := load(dir, string(id))
	if err != nil || len(sf.Entries) == 0 || sf.Entries[0].Text != "/crash" {
		t.Errorf("saved session = %+v, %v", sf, err)
	}
}

func TestDelay(t *testing.T) {
	p := start(t, Options{Dir: t.TempDir(), Delay: 30 * time.Millisecond}, newClient(true))
	id := p.newSession(t, t.TempDir())
	begin := time.Now()
	_, us := p.prompt(t, id, "/say abcdefgh") // four chunks
	if d := time.Since(begin); d < 4*30*time.Millisecond {
		t.Errorf("four delayed updates took only %v", d)
	}
	if agentText(us) != "abcdefgh" {
		t.Errorf("agent text = %q", agentText(us))
	}
}

func TestRunStopsWithContext(t *testing.T) {
	// Nothing is ever sent on the pipe, so only the context can end Run.
	r, w := io.Pipe()
	defer w.Close()
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(c, Options{Dir: t.TempDir()}, r, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if err := Run(context.Background(), Options{}, r, io.Discard); err == nil {
		t.Error("Run without Dir succeeded")
	}
}
