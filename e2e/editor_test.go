package e2e_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

func TestEditor_InitializeAdvertisesLoadResumeListCloseForAnyAgent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agents.plain]\ncommand = [\"{kandev}\", \"demo-agent\", \"--no-resume\", \"--no-load\"]\n")
	ed := w.openEditor("--agent", "plain")
	resp := ed.initialize()
	caps := resp.AgentCapabilities
	if !caps.LoadSession || caps.SessionCapabilities.Resume == nil || caps.SessionCapabilities.List == nil || caps.SessionCapabilities.Close == nil {
		t.Fatalf("capabilities: %s", mustJSON(caps))
	}
	if caps.PromptCapabilities.Image || caps.PromptCapabilities.Audio {
		t.Fatalf("images and audio cannot be carried in the text log, yet advertised: %s", mustJSON(caps.PromptCapabilities))
	}
	if resp.AgentInfo == nil || resp.AgentInfo.Name != "kandev" {
		t.Fatalf("agent info: %s", mustJSON(resp.AgentInfo))
	}
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d after stdin closed\n%s", code, ed.stderr)
	}
}

func TestEditor_PromptCapabilitiesAreTheAgentsAsFarAsTextCarriesThem(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// An agent that never ran in this home: kandev launches it to ask.
	rich := writeScript(t, "rich-agent", `read line
echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"promptCapabilities":{"embeddedContext":true,"image":true,"audio":true}},"authMethods":[]}}'
cat >/dev/null
`)
	w.config("[agents.rich]\ncommand = [\"" + rich + "\"]\n")
	ed := w.openEditor("--agent", "rich")
	got := ed.initialize().AgentCapabilities.PromptCapabilities
	if !got.EmbeddedContext || got.Image || got.Audio {
		t.Fatalf("prompt capabilities %s, want embedded context only", mustJSON(got))
	}
	ed.quit()
}

func TestEditor_NewSessionStreamsTheTurnAndContinuesInTheShell(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ed := w.openEditor()
	ed.initialize()
	began := time.Now()
	id := ed.newSession(w.cwd)
	created := time.Since(began)
	ed.mustPrompt(id, "remember PINEAPPLE\n/think pondering quietly\n/say hello streaming world")
	t.Logf("session/new (agent launched) %s, first turn %s", created, time.Since(began)-created)

	ups := ed.take(id)
	evs := w.events(string(id))
	if got, want := chunkText(ups, "agent"), agentText(evs, lastTurn(evs)); got != want || !strings.Contains(got, "hello streaming world") {
		t.Fatalf("agent text shown %q, logged %q", got, want)
	}
	if got := chunkText(ups, "thought"); got != "pondering quietly" {
		t.Fatalf("thought shown %q", got)
	}
	if got := chunkText(ups, "user"); got != "" {
		t.Fatalf("the editor's own prompt was echoed back: %q", got)
	}
	// The editor's session is a kandev session: the shell sees and continues it.
	if r := w.mustRun("list"); !strings.Contains(r.stdout, string(id)) {
		t.Fatalf("kandev list does not show %s:\n%s", id, r)
	}
	if code := ed.quit(); code != 0 {
		t.Fatalf("kandev acp exit %d\n%s", code, ed.stderr)
	}
	if s := w.session(string(id)); s.State != state.StateWaitingForInput || s.Title != "remember PINEAPPLE" {
		t.Fatalf("after the editor quit: state %s, title %q", s.State, s.Title)
	}
	if r := w.mustRun("prompt", string(id), "recall"); !strings.Contains(r.stdout, "PINEAPPLE") {
		t.Fatalf("kandev prompt did not continue the editor's session:\n%s", r)
	}
}

func TestEditor_PermissionRequestsAreAnsweredByTheEditor(t *testing.T) {
	t.Parallel()
	for _, allow := range []bool{true, false} {
		w := newWorld(t)
		ed := w.openEditor()
		ed.allow = allow
		ed.initialize()
		id := ed.newSession(w.cwd)
		ed.mustPrompt(id, "/write out.txt written by the agent")
		_, err := os.Stat(filepath.Join(w.cwd, "out.txt"))
		if allow != (err == nil) {
			t.Fatalf("editor allowed=%v, but out.txt exists=%v", allow, err == nil)
		}
		ed.mu.Lock()
		asked := ed.asked
		ed.mu.Unlock()
		if len(asked) != 1 || asked[0].SessionId != id {
			t.Fatalf("permission requests seen by the editor: %s", mustJSON(asked))
		}
		res := ofType(w.events(string(id)), eventlog.EventPermissionResolved)
		if len(res) != 1 || !strings.Contains(string(res[0].Data), `"allowed":`+map[bool]string{true: "true", false: "false"}[allow]) {
			t.Fatalf("logged answer: %s", mustJSON(res))
		}
		ed.quit()
	}
}

func TestEditor_CancelEndsTheRunningTurnCancelled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	var stop sdk.StopReason
	var err error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		stop, err = ed.prompt(id, "/sleep 20000")
	}()
	waitForRunningTurn(t, w, string(id))
	began := time.Now()
	if err := ed.conn.Cancel(t.Context(), sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err != nil || stop != sdk.StopReasonCancelled || time.Since(began) > 15*time.Second {
		t.Fatalf("after cancel: stop %q, err %v", stop, err)
	}
	if m := ofType(w.events(string(id)), eventlog.EventMarker); len(m) != 1 || !strings.Contains(m[0].Summary, "cancelled from the editor") {
		t.Fatalf("the cancel's marker does not say the editor cancelled: %s", mustJSON(m))
	}
	// The session goes on.
	ed.mustPrompt(id, "still here")
	// Closing the session during a turn cancels it and releases the agent.
	wg.Add(1)
	go func() {
		defer wg.Done()
		stop, err = ed.prompt(id, "/sleep 20000")
	}()
	waitForTurnStarted(t, w, string(id), "t3")
	if _, err := ed.conn.CloseSession(t.Context(), sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err != nil || stop != sdk.StopReasonCancelled || w.ownerAlive(string(id)) {
		inbox, _ := os.ReadFile(filepath.Join(w.home, "sessions", string(id)+".inbox.jsonl"))
		t.Fatalf("after close: stop %q, err %v, owner alive %v\ninbox:\n%s\nevents: %s\n%s", stop, err, w.ownerAlive(string(id)), inbox, mustJSON(ofType(w.events(string(id)), eventlog.EventTurnStarted, eventlog.EventTurnEnded, eventlog.EventMarker)), ed.stderr)
	}
	ed.quit()
}

func TestEditor_ListFiltersByCwdAndPagesWithACursor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	other := t.TempDir()
	var mine []string
	for _, p := range []string{"one", "two", "three"} {
		sid, r := w.start(p)
		if r.code != 0 {
			t.Fatal(r)
		}
		mine = append(mine, sid)
	}
	w.start("--cwd", other, "elsewhere")
	ed := w.openEditor("--list-page-size", "2")
	ed.initialize()
	ctx, cancel := editorCtx()
	defer cancel()
	var got []string
	var cursor *string
	for pages := 0; ; pages++ {
		resp, err := ed.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &w.cwd, Cursor: cursor})
		if err != nil || pages > 3 {
			t.Fatalf("list: %v (page %d)", err, pages)
		}
		for _, s := range resp.Sessions {
			if s.Title == nil || s.UpdatedAt == nil || s.Cwd != w.cwd {
				t.Fatalf("listed session lacks title, updatedAt or cwd: %s", mustJSON(s))
			}
		}
		got = append(got, listedIDs(resp)...)
		if cursor = resp.NextCursor; cursor == nil {
			break
		}
	}
	slices.Reverse(mine) // newest activity first
	if !slices.Equal(got, mine) {
		t.Fatalf("listed %v, want %v", got, mine)
	}
	all, err := ed.conn.ListSessions(ctx, sdk.ListSessionsRequest{})
	if err != nil || len(all.Sessions) != 2 || all.NextCursor == nil {
		t.Fatalf("unfiltered first page: %s %v", mustJSON(all), err)
	}
}

func TestEditor_LoadReplaysAShellSessionThenContinuesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("the notes"), 0o600)
	prompt := "remember PINEAPPLE\n/think deep thought\n/read notes.txt\n/bulk 10000"
	id, r := w.start(prompt)
	if r.code != 0 {
		t.Fatal(r)
	}
	logged := w.events(id)

	ed := w.openEditor()
	ed.initialize()
	began := time.Now()
	ed.load(sdk.SessionId(id), w.cwd)
	ups := ed.take(sdk.SessionId(id))
	t.Logf("load of a %d-event log: %d updates, replay and restore in %s", len(logged), len(ups), time.Since(began))
	if got := chunkText(ups, "user"); got != prompt {
		t.Fatalf("replayed user text %q", got)
	}
	if got, want := chunkText(ups, "agent"), agentText(logged, ""); got != want {
		t.Fatalf("replayed agent text differs from the log (%d vs %d bytes)", len(got), len(want))
	}
	if got := chunkText(ups, "thought"); got != "deep thought" {
		t.Fatalf("replayed thought %q", got)
	}
	if len(ups) > 50 {
		t.Fatalf("replay sent %d notifications for one turn; streamed chunks should be joined", len(ups))
	}
	var started, finished bool
	for _, u := range ups {
		started = started || u.ToolCall != nil && u.ToolCall.Kind == sdk.ToolKindRead
		finished = finished || started && u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted
	}
	if !started || !finished {
		t.Fatalf("replayed tool call and result missing: %s", mustJSON(ups))
	}
	// The agent behind was restored: it remembers what it was told in the shell.
	ed.mustPrompt(sdk.SessionId(id), "recall")
	if got := chunkText(ed.take(sdk.SessionId(id)), "agent"); !strings.Contains(got, "PINEAPPLE") {
		t.Fatalf("recall after load: %q", got)
	}
	ed.quit()
}

func TestEditor_KilledMidTurnIsRepairedAndContinuedOnceOnTheNextLoad(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	go ed.prompt(id, "remember MANGO\n/sleep 30000")
	// Killed once the agent has answered: a prompt it never accepted would be
	// sent again instead of continued.
	w.waitForEvents(string(id), "the agent's first words", func(evs []eventlog.Event) bool {
		return len(ofType(evs, eventlog.EventAgentMessage)) > 0
	})
	ed.cmd.Process.Signal(syscall.SIGKILL)
	<-ed.exited

	ed2 := w.openEditor()
	ed2.initialize()
	ed2.load(id, w.cwd)
	// The load answers once the agent is restored; the continuation runs after it.
	evs := w.waitForEvents(string(id), "the continuation's end", func(evs []eventlog.Event) bool {
		return len(ofType(evs, eventlog.EventTurnEnded)) == 2
	})
	var shutdown, continued int
	for _, e := range evs {
		if e.Type == eventlog.EventTurnEnded && e.StopReason == eventlog.StopShutdown {
			shutdown++
		}
		if e.Type == eventlog.EventTurnStarted && e.Source == eventlog.SourceContinuation {
			continued++
		}
	}
	if shutdown != 1 || continued != 1 {
		t.Fatalf("after the kill: %d shutdown turn ends, %d continuations (want 1 and 1)", shutdown, continued)
	}
	ed2.mustPrompt(id, "recall")
	if got := chunkText(ed2.take(id), "agent"); !strings.Contains(got, "MANGO") {
		t.Fatalf("recall after repair: %q", got)
	}
	ed2.quit()
	// Loading again continues nothing more.
	ed3 := w.openEditor()
	ed3.initialize()
	ed3.load(id, w.cwd)
	ed3.quit()
	if n := len(ofType(w.events(string(id)), eventlog.EventTurnStarted)); n != 3 {
		t.Fatalf("%d turns after a second load, want 3 (prompt, continuation, recall)", n)
	}
}

func TestEditor_StdinClosedMidTurnLetsTheTurnFinish(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	go ed.prompt(id, "/sleep 1500\nremember KIWI")
	waitForRunningTurn(t, w, string(id))
	if code := ed.quit(); code != 0 {
		t.Fatalf("exit %d\n%s", code, ed.stderr)
	}
	evs := w.events(string(id))
	ended := ofType(evs, eventlog.EventTurnEnded)
	if len(ended) != 1 || ended[0].StopReason != "end_turn" || !strings.Contains(agentText(evs, ""), "KIWI") {
		t.Fatalf("turn after the editor went away: %s", mustJSON(ended))
	}
	if s := w.session(string(id)); s.State != state.StateWaitingForInput || s.CurrentTurn != "" {
		t.Fatalf("session left %s", s.State)
	}
}

func TestEditor_ShellAndEditorShareALiveSessionThroughTheInbox(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ed := w.openEditor()
	ed.initialize()
	id := ed.newSession(w.cwd)
	ed.mustPrompt(id, "remember FIG")
	// The editor's process owns the session: a shell prompt is queued to it.
	if r := w.mustRun("prompt", string(id), "recall"); !strings.Contains(r.stdout, "FIG") {
		t.Fatalf("shell prompt while the editor owns the session:\n%s", r)
	}
	// Closing the session releases the agent; a shell owner then runs a long
	// turn and the editor's prompt is queued behind it.
	ctx, cancel := editorCtx()
	defer cancel()
	if _, err := ed.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if w.ownerAlive(string(id)) {
		t.Fatal("session/close left the editor's process owning the session")
	}
	shell, out := w.background("prompt", string(id), "/sleep 1500")
	waitForTurnStarted(t, w, string(id), "t3")
	ed.mustPrompt(id, "remember PLUM")
	if got := chunkText(ed.take(id), "agent"); !strings.Contains(got, "PLUM") {
		t.Fatalf("editor prompt served by the shell's owner showed %q", got)
	}
	if err := shell.Wait(); err != nil {
		t.Fatalf("shell prompt: %v\n%s", err, out)
	}
	// Resume restores the agent without replaying anything.
	if _, err := ed.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: id, Cwd: w.cwd}); err != nil {
		t.Fatal(err)
	}
	if ups := ed.take(id); len(ups) != 0 {
		t.Fatalf("session/resume replayed %d updates", len(ups))
	}
	ed.mustPrompt(id, "recall")
	if got := chunkText(ed.take(id), "agent"); !strings.Contains(got, "FIG") || !strings.Contains(got, "PLUM") {
		t.Fatalf("recall after resume: %q", got)
	}
	ed.quit()
}

// waitForTurnStarted waits until the log of session id shows turn started
// (the record may still show the previous turn running for an instant).
func waitForTurnStarted(t *testing.T, w *world, id, turn string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs, _, _ := eventlog.ReadAll(filepath.Join(w.home, "sessions", id+".jsonl"))
		if lastTurn(evs) == turn {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s never started turn %s", id, turn)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEditor_LoadRestoresTheAgentInEveryRestoreMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		switches string
		restore  string // how the agent behind is restored
	}{
		{"native resume", ``, "resume"},
		{"load", `, "--no-resume"`, "load"},
		{"fresh session with the history", `, "--no-resume", "--no-load"`, "new"},
		{"agent forgot the session", `, "--fail-on-resume"`, "new"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.config(`[agents.behind]` + "\n" + `command = ["{kandev}", "demo-agent"` + c.switches + "]\n")
			// --linger 0: the editor's load must restore the agent, not find it warm.
			id, r := w.start("--linger", "0", "--agent", "behind", "remember PINEAPPLE")
			if r.code != 0 {
				t.Fatal(r)
			}
			ed := w.openEditor()
			ed.initialize()
			ed.load(sdk.SessionId(id), w.cwd)
			ed.mustPrompt(sdk.SessionId(id), "recall")
			if got := chunkText(ed.take(sdk.SessionId(id)), "agent"); !strings.Contains(got, "PINEAPPLE") {
				t.Fatalf("recall after load: %q", got)
			}
			if last := lastOf(t, ofType(w.events(id), eventlog.EventAgentStarted), "agent_started"); last.Restore != c.restore {
				t.Fatalf("restored by %q (%s), want %q", last.Restore, last.FallbackReason, c.restore)
			}
			ed.quit()
		})
	}
}

func TestEditor_PausedSessionLoadsAndTheNextPromptTakesOver(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Killed mid-turn under approve-all: the editor runs under ask, so the
	// continuation pauses for an operator.
	printed := w.killAt(func(e eventlog.Event) bool { return e.Type == eventlog.EventAgentMessage }, 10*time.Second,
		"--permissions", "approve-all", "start", "remember MANGO\n/sleep 30000")
	id := printed[0].SessionID
	ed := w.openEditor()
	ed.initialize()
	ed.load(sdk.SessionId(id), w.cwd)
	if got := chunkText(ed.take(sdk.SessionId(id)), "agent"); !strings.Contains(got, "paused") {
		t.Fatalf("the editor was not told the continuation is paused: %q", got)
	}
	ed.mustPrompt(sdk.SessionId(id), "recall")
	if got := chunkText(ed.take(sdk.SessionId(id)), "agent"); !strings.Contains(got, "MANGO") {
		t.Fatalf("recall after taking over the pause: %q", got)
	}
	if n := len(ofType(w.events(id), eventlog.EventTurnStarted)); n != 2 {
		t.Fatalf("%d turns, want 2 (the interrupted one and the editor's; no continuation)", n)
	}
	ed.quit()
}

func TestEditor_LoadAfterClearReplaysOnlyTheCurrentConversation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("clear", id)
	w.mustRun("prompt", id, "remember BANANA")
	ed := w.openEditor()
	ed.initialize()
	ed.load(sdk.SessionId(id), w.cwd)
	ups := ed.take(sdk.SessionId(id))
	if got := chunkText(ups, "user"); got != "remember BANANA" {
		t.Fatalf("replayed user text %q, want only what came after the clear", got)
	}
	ed.quit()
}
