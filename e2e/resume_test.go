package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// demoProfiles configures the demo agent with each capability switched off.
func demoProfiles(w *world) {
	w.config(`
[agents.demo-noresume]
command = ["` + kandevBin + `", "demo-agent", "--no-resume"]
[agents.demo-noload]
command = ["` + kandevBin + `", "demo-agent", "--no-resume", "--no-load"]
[agents.demo-fail]
command = ["` + kandevBin + `", "demo-agent", "--fail-on-resume"]
`)
}

func agentStarts(evs []eventlog.Event) []eventlog.Event {
	return ofType(evs, eventlog.EventAgentStarted)
}

func TestResume_EveryPromptInANewProcessRestoresTheConversation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		agent       string
		wantRestore string
		wantWarning bool
	}{
		{"demo", "resume", false},
		{"demo-noresume", "load", false},
		{"demo-noload", "new", false},
		{"demo-fail", "new", true},
	}
	for _, tc := range cases {
		t.Run(tc.agent, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.underCI() // the subject is restoring the agent in each new command: no warm owner
			demoProfiles(w)
			id, r := w.start("--agent", tc.agent, "remember PINEAPPLE")
			if r.code != 0 {
				t.Fatal(r)
			}
			r = w.run("prompt", id, "recall")
			if r.code != 0 {
				t.Fatal(r)
			}
			if !strings.Contains(r.stdout, "PINEAPPLE") {
				t.Fatalf("recall in a new process lost the conversation:\n%s", r)
			}
			evs := w.events(id)
			assertNoSeqGap(t, evs)
			starts := agentStarts(evs)
			if len(starts) != 2 || starts[0].Restore != "new" || starts[1].Restore != tc.wantRestore {
				t.Fatalf("agent_started restores: %+v", starts)
			}
			warned := false
			for _, m := range ofType(evs, eventlog.EventMarker) {
				if m.Severity == "warning" && strings.Contains(m.Summary, "could not be restored") {
					warned = true
				}
			}
			if warned != tc.wantWarning {
				t.Fatalf("unknown-session warning marker present=%v, want %v", warned, tc.wantWarning)
			}
			if tc.wantWarning && !strings.Contains(starts[1].FallbackReason, "-32002") {
				t.Fatalf("fallback reason %q does not name the unknown session", starts[1].FallbackReason)
			}
			s := w.session(id)
			if s.State != state.StateWaitingForInput || s.PendingContext || s.ResumeToken == "" {
				t.Fatalf("record: state %s pending context %v token %q", s.State, s.PendingContext, s.ResumeToken)
			}
		})
	}
}

func TestResume_LoadReplayOf100000UpdatesIsNotRecordedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.underCI() // the subject is restoring the agent in each new command: no warm owner
	demoProfiles(w)
	id, r := w.start("--agent", "demo-noresume", "/bulk 100000")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	before := len(w.events(id))
	r = w.run("prompt", id, "/say after the replay")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	evs := w.events(id)
	assertNoSeqGap(t, evs)
	starts := agentStarts(evs)
	if starts[len(starts)-1].Restore != "load" {
		t.Fatalf("restore %q, want load", starts[len(starts)-1].Restore)
	}
	if added := len(evs) - before; added > 30 {
		t.Fatalf("the load replay was recorded again: %d events added for one short turn", added)
	}
	if !strings.Contains(agentText(evs, lastTurn(evs)), "after the replay") {
		t.Fatal("the turn after the replay has no answer")
	}
}

func TestResume_SDKExampleAgentGetsTheResumeContextInANewSession(t *testing.T) {
	t.Parallel()
	bin := buildExampleAgent(t)
	w := newWorld(t)
	w.underCI() // the subject is restoring the agent in each new command: no warm owner
	w.config("[agents.example]\ncommand = [\"" + bin + "\"]\n")
	id, r := w.start("--agent", "example", "--permissions", "deny-all", "first request PINEAPPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	if s := w.session(id); s.PendingContext {
		t.Fatal("context pending before any restart")
	}
	r = w.run("--permissions", "deny-all", "prompt", id, "second request")
	if r.code != 0 {
		t.Fatal(r)
	}
	evs := w.events(id)
	starts := agentStarts(evs)
	if len(starts) != 2 || starts[1].Restore != "new" {
		t.Fatalf("restores: %+v", starts)
	}
	// The log keeps the user's words; the context went to the agent once and is no longer pending.
	if s := w.session(id); s.PendingContext {
		t.Fatal("resume context still pending after an accepted prompt")
	}
	users := ofType(evs, eventlog.EventUserMessage)
	if users[len(users)-1].Content != "second request" {
		t.Fatalf("logged user message %q", users[len(users)-1].Content)
	}
}

func TestResume_ResumeContextReachesAnAgentWithoutNativeRestore(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	demoProfiles(w)
	id, _ := w.start("--agent", "demo-noload", "remember MANGO")
	// Without resume or load every new process gets a fresh agent session:
	// MANGO is only known to it through the injected history.
	for i := 0; i < 2; i++ {
		r := w.mustRun("prompt", id, "recall")
		if !strings.Contains(r.stdout, "MANGO") {
			t.Fatalf("prompt %d: %s", i+2, r)
		}
	}
	// The log keeps what the user typed, not the injected block.
	for _, u := range ofType(w.events(id), eventlog.EventUserMessage) {
		if strings.Contains(u.Content, "RESUME CONTEXT") {
			t.Fatalf("the resume context leaked into the log: %q", u.Content)
		}
	}
}

func TestResume_TransportFailureDuringResumeKeepsTheToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.underCI() // the subject is restoring the agent in each new command: no warm owner
	flag := filepath.Join(t.TempDir(), "fail")
	// An agent that dies during the handshake while the flag file exists.
	agent := writeScript(t, "flaky-agent", `if [ -e `+flag+` ]; then
  read line
  echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"resume":{}}},"authMethods":[]}}'
  read line
  exit 1
fi
exec `+kandevBin+` demo-agent
`)
	w.config("[agents.flaky]\ncommand = [\"" + agent + "\"]\n")
	id, r := w.start("--agent", "flaky", "remember KIWI")
	if r.code != 0 {
		t.Fatal(r)
	}
	token := w.session(id).ResumeToken
	os.WriteFile(flag, nil, 0o644)
	r = w.run("resume", id)
	if r.code != 6 {
		t.Fatalf("resume during a transport failure: %s", r)
	}
	s := w.session(id)
	if s.ResumeToken != token || s.State != state.StateWaitingForInput {
		t.Fatalf("token %q (was %q), state %s", s.ResumeToken, token, s.State)
	}
	os.Remove(flag)
	r = w.run("prompt", id, "recall")
	if r.code != 0 || !strings.Contains(r.stdout, "KIWI") {
		t.Fatalf("retry: %s", r)
	}
	starts := agentStarts(w.events(id))
	if starts[len(starts)-1].Restore != "resume" {
		t.Fatalf("retry restored with %q", starts[len(starts)-1].Restore)
	}
}

func TestResume_ResumeJSONAndTerminalSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.underCI() // the subject is restoring the agent in each new command: no warm owner
	id, _ := w.start("/say hi")
	var out struct {
		Session struct{ ID, State string }
		Attach  struct {
			SessionID  string `json:"session_id"`
			AttachedTo string `json:"attached_to"`
		}
		Restore struct {
			Method         string
			FallbackReason string `json:"fallback_reason"`
		}
	}
	r := w.mustRun("--json", "resume", id)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	decodeJSON(t, lines[len(lines)-1], &out)
	if out.Session.State != "WAITING_FOR_INPUT" || out.Restore.Method != "resume" || out.Attach.SessionID != id || out.Attach.AttachedTo == "" {
		t.Fatalf("resume json: %s", lines[len(lines)-1])
	}
	w.mustRun("done", id)
	r = w.run("resume", id)
	if r.code != 5 || !strings.Contains(r.stderr, "kandev start --parent "+id) {
		t.Fatalf("resume of a done session: %s", r)
	}
}

func TestStart_ParentCarriesTheParentsHistory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	parent, _ := w.start("remember COCONUT")
	w.mustRun("done", parent)
	child, r := w.start("--parent", parent, "recall")
	if r.code != 0 || !strings.Contains(r.stdout, "COCONUT") {
		t.Fatalf("child did not get the parent's history: %s", r)
	}
	if s := w.session(child); s.ParentID != parent || s.PendingContext {
		t.Fatalf("child record: parent %q pending %v", s.ParentID, s.PendingContext)
	}
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestResume_WorktreeMovedDeletedOrSwitchedIsNotResumable(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: git is not installed")
	}
	cases := []struct {
		name   string
		break_ func(t *testing.T, repo, wt string)
		want   string
	}{
		{"deleted", func(t *testing.T, repo, wt string) { os.RemoveAll(wt) }, "no longer exists"},
		{"moved", func(t *testing.T, repo, wt string) { os.Rename(wt, wt+"-moved") }, "no longer exists"},
		{"switched", func(t *testing.T, repo, wt string) { git(t, wt, "checkout", "-q", "-b", "other") }, `"other"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.underCI() // the subject is restoring the agent in each new command: no warm owner
			repo := filepath.Join(t.TempDir(), "repo")
			os.MkdirAll(repo, 0o755)
			git(t, repo, "init", "-q", "-b", "main")
			os.WriteFile(filepath.Join(repo, "f"), []byte("x"), 0o644)
			git(t, repo, "add", "f")
			git(t, repo, "commit", "-q", "-m", "init")
			wt := filepath.Join(filepath.Dir(repo), "feature-wt")
			git(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
			id, r := w.start("--cwd", wt, "/say hi")
			if r.code != 0 {
				t.Fatal(r)
			}
			s := w.session(id)
			if s.Worktree == nil || s.Worktree.Branch != "feature" || s.Workspace != "feature-wt" {
				t.Fatalf("worktree not recorded: %+v workspace %q", s.Worktree, s.Workspace)
			}
			tc.break_(t, repo, wt)
			var st struct {
				Session struct{ Worktree worktree.Worktree }
				Status  struct {
					IsResumable bool `json:"is_resumable"`
				}
			}
			decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
			if st.Status.IsResumable || st.Session.Worktree.Valid || !strings.Contains(st.Session.Worktree.Problem, tc.want) {
				t.Fatalf("status: %+v", st)
			}
			r = w.run("resume", id)
			if r.code != 5 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("resume: %s", r)
			}
			// resume recorded the problem: list --resumable no longer offers it.
			if out := w.mustRun("list", "--resumable").stdout; strings.Contains(out, id) {
				t.Fatalf("list --resumable offers a session with a broken worktree:\n%s", out)
			}
			r = w.run("prompt", id, "hello")
			if r.code != 5 {
				t.Fatalf("prompt: %s", r)
			}
		})
	}
}

func TestResume_ResumeFlagRelaunchAndFastFailFallback(t *testing.T) {
	t.Parallel()
	// flag-ok strips the flag and runs the demo agent; flag-bad exits at once when given it.
	ok := writeScript(t, "flag-ok", `[ "$1" = "--resume-token" ] && shift 2
exec `+kandevBin+` demo-agent --no-resume --no-load
`)
	bad := writeScript(t, "flag-bad", `[ "$1" = "--resume-token" ] && { echo "unknown flag --resume-token" >&2; exit 2; }
exec `+kandevBin+` demo-agent --no-resume --no-load
`)
	cases := []struct {
		script, restore, reason string
	}{
		{ok, "flag", ""},
		{bad, "new", "resume flag"},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.script), func(t *testing.T) {
			w := newWorld(t)
			w.underCI() // the subject is restoring the agent in each new command: no warm owner
			w.config("[agents.flagged]\ncommand = [\"" + tc.script + "\"]\nresume_flag = [\"--resume-token\", \"{token}\"]\nhistory_injection = true\n")
			id, r := w.start("--agent", "flagged", "remember LYCHEE")
			if r.code != 0 {
				t.Fatal(r)
			}
			r = w.run("prompt", id, "recall")
			if r.code != 0 || !strings.Contains(r.stdout, "LYCHEE") {
				t.Fatalf("%s", r)
			}
			starts := agentStarts(w.events(id))
			last := starts[len(starts)-1]
			if last.Restore != tc.restore || !strings.Contains(last.FallbackReason, tc.reason) {
				t.Fatalf("restore %q reason %q", last.Restore, last.FallbackReason)
			}
		})
	}
}

func TestPrompt_CtrlCCancelsTheTurnAndExits130(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	cmd, _ := w.background("prompt", id, "/sleep 60000")
	waitFor(t, 20*time.Second, "the turn to start", func() bool {
		return w.session(id).State == state.StateRunning && w.ownerAlive(id)
	})
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v", err)
	}
	if s := w.session(id); s.StopReason != "cancelled" || s.State != state.StateWaitingForInput {
		t.Fatalf("record %+v", s)
	}
}

func TestList_ResumableShowsExactlyWhatResumeCanActOn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	idle, _ := w.start()
	interrupted, _ := w.start()
	w.killAt(isType(eventlog.EventAgentMessage), 10*time.Second, "prompt", interrupted, "/say working\n/sleep 5000")
	done, _ := w.start()
	w.mustRun("done", done)
	var l struct{ Sessions []struct{ ID, Badge string } }
	decodeJSON(t, w.mustRun("--json", "list", "--resumable").stdout, &l)
	got := map[string]string{}
	for _, s := range l.Sessions {
		got[s.ID] = s.Badge
	}
	if got[interrupted] != "needs-resume" || got[idle] == "" || got[done] != "" {
		t.Fatalf("resumable: %+v", l.Sessions)
	}
	for id := range got {
		if r := w.run("resume", id); r.code != 0 {
			t.Fatalf("listed as resumable but resume failed: %s", r)
		}
	}
}

func TestList_ResumableLeavesOutASessionAttachedElsewhereUntilDetached(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.start()
	other, _ := w.start()
	if r := w.run("resume", id, "--holder", "editor"); r.code != 0 {
		t.Fatalf("resume --holder editor: %s", r)
	}
	resumable := func() map[string]bool {
		var l struct{ Sessions []struct{ ID string } }
		decodeJSON(t, w.mustRun("--json", "list", "--resumable").stdout, &l)
		got := map[string]bool{}
		for _, s := range l.Sessions {
			got[s.ID] = true
		}
		return got
	}
	if got := resumable(); got[id] || !got[other] {
		t.Fatalf("with %s attached to editor: %v", id, got)
	}
	w.mustRun("detach", id, "--holder", "editor")
	if got := resumable(); !got[id] || !got[other] {
		t.Fatalf("after detach: %v", got)
	}
}
