package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

// kandev runs kandev in-process, as main does, with its own streams: the
// home is --home, stdin is what the case gives.
func kandev(t *testing.T, home, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// checkShape fails unless the object on stdout has the fields of the
// registry's output for cmd: each one it prints is declared, and each
// that is not omitempty is there.
func checkShape(t *testing.T, cmd, stdout string) {
	t.Helper()
	v, ok := jsonOutputs()[cmd]
	if !ok {
		t.Fatalf("JSONOutputs has no %q", cmd)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	declared := map[string]bool{}
	for _, n := range jsonNames(reflect.TypeOf(v)) {
		name, omit := strings.CutSuffix(n, ",omitempty")
		declared[name] = true
		if _, there := got[name]; !there && !omit {
			t.Errorf("%s --json lacks %q: %s", cmd, name, stdout)
		}
	}
	for k := range got {
		if !declared[k] {
			t.Errorf("%s --json prints %q, which %T does not declare", cmd, k, v)
		}
	}
}

// withPulledServers makes the session's MCP servers wait for kandev trust,
// as a pull from another machine leaves them.
func withPulledServers(t *testing.T, h *state.Home, id string) {
	t.Helper()
	if _, err := h.UpdateSession(id, func(s *state.Session) error {
		s.MCPConfig = []state.MCPServer{{Name: "fs", Command: "mcp-fs", Env: map[string]string{"TOKEN": "${GH_TOKEN}"}}}
		s.TrustPending = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func finished(t *testing.T, h *state.Home, id string) {
	t.Helper()
	if code, _, errs := kandev(t, h.Dir, "", "done", id); code != 0 {
		t.Fatalf("done: exit %d: %s", code, errs)
	}
}

// Commands run in-process against a home of real files (one idle session
// with one finished turn): exit codes, the text a person reads, and the
// --json objects scripts read, checked against jsonOutputs.
func TestRun_CommandsInProcessAgainstARealHome(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, h *state.Home, id string)
		args  []string // ID stands for the session's id
		stdin string
		code  int
		shape string   // the jsonOutputs entry stdout must match
		out   []string // on stdout (ID replaced)
		err   []string // on stderr
		check func(t *testing.T, h *state.Home, id, stdout string)
	}{
		{name: "status --json is the session and its verdict", args: []string{"status", "ID", "--json"}, shape: "status",
			check: func(t *testing.T, h *state.Home, id, stdout string) {
				var o statusOutput
				json.Unmarshal([]byte(stdout), &o)
				if o.Session == nil || o.Session.ID != id || o.Status.Badge != verdict.BadgeIdle || !o.Status.IsResumable || o.Status.NeedsResume {
					t.Fatalf("status %s", stdout)
				}
			}},
		{name: "status names the badge and the verdict", args: []string{"status", "ID"},
			out: []string{"session   ID  [idle]", "title     parent", "verdict   ", "next      kandev prompt"}},
		{name: "status of an unknown session is not found, with an error object", args: []string{"status", "20991231-000000-ffffffff", "--json"},
			code: ExitNotFound, out: []string{`{"error":{"code":"not_found","message":`}, err: []string{"20991231-000000-ffffffff"}},
		{name: "list --json gives each session its badge", args: []string{"list", "--json"}, shape: "list",
			out: []string{`"id":"ID"`, `"badge":"idle"`, `"title":"parent"`}},
		{name: "list --resumable keeps an idle session", args: []string{"list", "--resumable"}, out: []string{"ID", "idle", "parent"}},
		{name: "list --state names a state that does not exist", args: []string{"list", "--state", "DONE"}, code: ExitUsage, err: []string{"DONE"}},
		{name: "set --title renames the session", args: []string{"set", "ID", "--title", "renamed", "--json"}, shape: "set --title",
			out: []string{`{"session_id":"ID","title":"renamed"}` + "\n"},
			check: func(t *testing.T, h *state.Home, id, _ string) {
				if s, _ := h.LoadSession(id); s.Title != "renamed" {
					t.Fatalf("title %q after set --title", s.Title)
				}
			}},
		{name: "set --mcp alone records the servers for the agent's next start",
			setup: func(t *testing.T, h *state.Home, id string) {
				os.WriteFile(filepath.Join(h.Dir, "mcp.json"), []byte(`{"mcpServers": {"notes": {"command": "notes-mcp"}}}`), 0o600)
			},
			args: []string{"set", "ID", "--mcp", "MCPFILE", "--json"}, shape: "set",
			out: []string{`{"applied":false,"queued":false,"session_id":"ID","setup":{`, `"notes"`}},
		{name: "set with nothing to set is a usage error", args: []string{"set", "ID"}, code: ExitUsage, err: []string{"nothing to set", "--title"}},
		{name: "set on a finished session is refused", setup: finished, args: []string{"set", "ID", "--title", "late"}, code: ExitNotResumable},
		{name: "trust of a session that waits for nothing says so", args: []string{"trust", "ID"}, out: []string{"has no MCP servers", "waits for nothing"}},
		{name: "trust --json of pulled MCP servers names them and records the trust", setup: withPulledServers,
			args: []string{"trust", "ID", "--json", "--yes"}, shape: "trust",
			out: []string{`"mcp_servers":[{"name":"fs","command":"mcp-fs","env_names":["TOKEN"],"env":{"TOKEN":"${GH_TOKEN}"},"reads_env":["GH_TOKEN"]}]`, `"trusted":true,"was_pending":true`},
			check: func(t *testing.T, h *state.Home, id, _ string) {
				if s, _ := h.LoadSession(id); s.TrustPending {
					t.Fatal("the trust was not recorded")
				}
			}},
		{name: "status of pulled MCP servers says to trust them", setup: withPulledServers, args: []string{"status", "ID", "--json"}, shape: "status",
			out: []string{`"trust":"pending"`, `"next":"kandev trust ID"`}},
		{name: "close --json with nothing running", args: []string{"close", "ID", "--json"}, shape: "close",
			out: []string{`{"closed":false,"session_id":"ID","unscheduled":false}` + "\n"}},
		{name: "cancel --json with nothing running", args: []string{"cancel", "ID", "--json"}, shape: "cancel",
			out: []string{`{"delivered_to":"","requested":"cancel","session_id":"ID"}` + "\n"}},
		{name: "stop --json with no owner records the stop itself", args: []string{"stop", "ID", "--json"}, shape: "stop",
			out: []string{`"repair":{`, `"requested":"stop","session_id":"ID"}`},
			check: func(t *testing.T, h *state.Home, id, stdout string) {
				if strings.Contains(stdout, "delivered_to") {
					t.Fatalf("a stop recorded here names no owner: %s", stdout)
				}
				if code, out, _ := kandev(t, h.Dir, "", "status", id, "--json"); code != 0 || !strings.Contains(out, `"badge":"stopped"`) {
					t.Fatalf("status after stop: %s", out)
				}
			}},
		{name: "done --json is the finished session", args: []string{"done", "ID", "--json"}, shape: "done", out: []string{`"state":"COMPLETED"`}},
		{name: "resume of a finished session is not resumable and says what to do", setup: finished, args: []string{"resume", "ID", "--json"},
			code: ExitNotResumable, out: []string{`{"error":{"code":"not_resumable"`}, err: []string{"kandev start --parent ID"}},
		{name: "events --json are the log's events", args: []string{"events", "ID", "--json"}, shape: "events",
			out: []string{`"type":"turn_started"`, `"content":"remember FIG"`, `"stop_reason":"end_turn"`}},
		{name: "events --type keeps the events of that type", args: []string{"events", "ID", "--type", "user_message"},
			out: []string{"user_message", "remember FIG"}},
		{name: "transcript --json is a page of the conversation", args: []string{"transcript", "ID", "--json"}, shape: "transcript", out: []string{"remember FIG"}},
		{name: "recap --json", args: []string{"recap", "ID", "--json"}, shape: "recap", out: []string{`"recap":{`}},
		{name: "usage --json of a session that reported none", args: []string{"usage", "ID", "--json"}, shape: "usage", out: []string{`"by":"session"`}},
		{name: "clear --json says files stay", args: []string{"clear", "ID", "--json"}, shape: "clear", out: []string{`"files_rewound":false`}},
		{name: "an empty prompt on stdin is refused before any agent starts", args: []string{"prompt", "ID", "-"}, stdin: "\n", code: ExitUsage},
		{name: "a flag the command does not have, with --json", args: []string{"status", "ID", "--bogus", "--json"}, code: ExitUsage,
			out: []string{`{"error":{"code":"usage"`}, err: []string{"--bogus", "kandev status --help"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, id := forkableParent(t)
			if tc.setup != nil {
				tc.setup(t, h, id)
			}
			args := slices.Clone(tc.args)
			for i, a := range args {
				args[i] = strings.ReplaceAll(strings.ReplaceAll(a, "ID", id), "MCPFILE", filepath.Join(h.Dir, "mcp.json"))
			}
			code, out, errs := kandev(t, h.Dir, tc.stdin, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			for _, w := range tc.out {
				if w = strings.ReplaceAll(w, "ID", id); !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.err {
				if w = strings.ReplaceAll(w, "ID", id); !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if code != 0 && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("an error takes one line on stderr:\n%s", errs)
			}
			if tc.shape != "" {
				checkShape(t, tc.shape, out)
			}
			if tc.check != nil {
				tc.check(t, h, id, out)
			}
		})
	}
}

// doctor checks the home, git and every installed agent, launching the
// demo agent (this test binary, see TestMain) for its handshake. PATH holds
// git only, so no agent of this machine is probed. A home others can read
// is a problem with its fix; once fixed, everything is OK.
func TestDoctor_NamesAProblemWithItsFixAndIsOKOnceFixed(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	if err := os.Symlink(git, filepath.Join(bin, filepath.Base(git))); err != nil {
		t.Skip(err)
	}
	t.Setenv("PATH", bin)
	h, _ := forkableParent(t)
	if err := os.Chmod(h.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doctor := func(wantCode int) doctorOutput {
		t.Helper()
		code, out, errs := kandev(t, h.Dir, "", "doctor", "--json")
		if code != wantCode {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, wantCode, out, errs)
		}
		checkShape(t, "doctor", out)
		var o doctorOutput
		json.Unmarshal([]byte(out), &o)
		return o
	}
	byName := func(o doctorOutput) map[string]check {
		m := map[string]check{}
		for _, c := range o.Checks {
			m[c.Name] = c
		}
		return m
	}
	o := doctor(ExitError)
	if perm := byName(o)["permissions"]; o.OK || perm.OK || perm.Fix != "chmod 700 "+h.Dir {
		t.Fatalf("a home others can read: %+v", perm)
	}
	if err := os.Chmod(h.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	o = doctor(0)
	if demo := byName(o)["agent demo"]; !o.OK || !demo.OK || !strings.Contains(demo.Message, "installed: kandev-demo-agent") {
		t.Fatalf("doctor: %+v", o)
	}
	code, out, _ := kandev(t, h.Dir, "", "doctor")
	if code != 0 || !strings.Contains(out, "kandev home "+h.Dir) || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor in text: exit %d\n%s", code, out)
	}
}

// Without --home, the home is $KANDEV_HOME, else ~/.kandev; with neither
// variable set kandev stops, saying how to name one.
func TestRun_TheHomeComesFromTheEnvironment(t *testing.T) {
	h, id := forkableParent(t)
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KANDEV_HOME", h.Dir)
	if code, out, errs := run("status", id, "--json"); code != 0 || !strings.Contains(out, `"id":"`+id+`"`) {
		t.Fatalf("KANDEV_HOME: exit %d\n%s%s", code, out, errs)
	}
	t.Setenv("KANDEV_HOME", "")
	if code, out, errs := run("list", "--json"); code != 0 || out != `{"sessions":[]}`+"\n" {
		t.Fatalf("~/.kandev: exit %d\n%s%s", code, out, errs)
	}
	t.Setenv("HOME", "")
	code, out, errs := run("list", "--json")
	if code != ExitError || !strings.Contains(errs, "set KANDEV_HOME or pass --home DIR") || !strings.Contains(out, `{"error":{"code":"error"`) {
		t.Fatalf("no home: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
