package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/state"
)

// Everyday use: the overview, completion, doctor and prune (issue 8).

func TestOverview_KandevAloneTeachesTheCommonFlows(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.mustRun()
	for _, flow := range []string{"kandev demo", "kandev start ", "kandev prompt ", "kandev resume ", "kandev recap ", "kandev list", "kandev status "} {
		if !strings.Contains(r.stdout, flow) {
			t.Errorf("overview lacks %q:\n%s", flow, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(w.home, "sessions")); err == nil {
		t.Error("printing the overview created the home")
	}
}

// dailyShellEnv is the world's environment with the test binary first on PATH, as
// an installed kandev would be.
func (w *world) dailyShellEnv() []string {
	return append(slices.Clone(w.env), "PATH="+filepath.Dir(kandevBin)+":"+os.Getenv("PATH"))
}

// dailyShell runs a script in a shell (bash, zsh, fish) and returns its output.
func (w *world) dailyShell(sh string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(sh, args...)
	cmd.Dir, cmd.Env = w.cwd, w.dailyShellEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("%s %v: %v\n%s", sh, args, err, out)
	}
	return string(out)
}

// dailyTwoSessions starts an older and a newer session and returns their ids.
func dailyTwoSessions(w *world) (older, newer string) {
	w.t.Helper()
	older, r := w.start("--title", "older one", "/say a")
	if r.code != 0 {
		w.t.Fatal(r)
	}
	newer, r = w.start("--title", "newer one", "/say b")
	if r.code != 0 {
		w.t.Fatal(r)
	}
	return older, newer
}

func TestCompletion_BashScriptLoadsAndCompletesCommandsFlagsAgentsAndSessions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	older, newer := dailyTwoSessions(w)
	script := filepath.Join(t.TempDir(), "kandev.bash")
	os.WriteFile(script, []byte(w.mustRun("completion", "bash").stdout), 0o600)
	// complete() fills COMP_* the way bash does at <TAB> and prints the candidates.
	out := w.dailyShell("bash", "-c", `source "$1" || exit 1
complete -p kandev || exit 1
complete() { COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< "$COMP_LINE"; COMP_CWORD=${#COMP_WORDS[@]}; _kandev; echo "$1|${COMPREPLY[*]}"; }
complete "kandev st"
complete "kandev status "
complete "kandev --json prompt "
complete "kandev start --parent "
complete "kandev start --agent "
complete "kandev start --agent=cl"
complete "kandev prune --d"
complete "kandev completion "
`, "bash", script)
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "|"); ok {
			got[k] = v
		}
	}
	if !strings.Contains(out, "complete -o default") || !strings.Contains(out, "-F _kandev kandev") {
		t.Fatalf("complete -p kandev does not show the registration:\n%s", out)
	}
	want := map[string]string{
		"kandev st":               "start status stop",
		"kandev status ":          newer + " " + older, // most recent first
		"kandev --json prompt ":   newer + " " + older,
		"kandev start --parent ":  newer + " " + older,
		"kandev start --agent=cl": "claude", // bash replaces only what follows '='
		"kandev prune --d":        "--dry-run",
		"kandev completion ":      "bash zsh fish",
	}
	for line, w := range want {
		if got[line] != w {
			t.Errorf("%q<TAB> offers %q, want %q", line, got[line], w)
		}
	}
	agents := strings.Fields(got["kandev start --agent "])
	for _, a := range []string{"claude", "codex", "copilot", "gemini", "opencode", "auggie", "amp", "demo"} {
		if !slices.Contains(agents, a) {
			t.Errorf("agent %s not offered for --agent: %v", a, agents)
		}
	}
}

func TestCompletion_FishCompletesThroughItsOwnEngine(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("SKIP: fish is not installed")
	}
	w := newWorld(t)
	older, newer := dailyTwoSessions(w)
	out := w.dailyShell("fish", "-c", `kandev completion fish | source
complete -C "kandev status "
echo ---
complete -C "kandev start --agent de"`)
	ids, agents, _ := strings.Cut(out, "---")
	if i, j := strings.Index(ids, newer+"\t"), strings.Index(ids, older+"\t"); i < 0 || j < 0 || i > j {
		t.Fatalf("fish: session ids not offered newest first:\n%s", out)
	}
	if !strings.Contains(ids, "newer one") {
		t.Errorf("fish: no title shown beside the id:\n%s", ids)
	}
	if strings.TrimSpace(agents) != "demo\tkandev demo-agent" {
		t.Errorf("fish: --agent de<TAB> offers %q", agents)
	}
}

func TestCompletion_ZshRegistersAndOffersCandidates(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("SKIP: zsh is not installed")
	}
	w := newWorld(t)
	older, newer := dailyTwoSessions(w)
	script := filepath.Join(t.TempDir(), "_kandev")
	os.WriteFile(script, []byte(w.mustRun("completion", "zsh").stdout), 0o600)
	registered := w.dailyShell("zsh", "-fc", `autoload -U compinit && compinit -u -d "$2" && source "$1" && print -r -- "$_comps[kandev]"`, "zsh", script, filepath.Join(t.TempDir(), "zcompdump"))
	if strings.TrimSpace(registered) != "_kandev" {
		t.Fatalf("zsh: kandev is not bound to _kandev: %q", registered)
	}
	// compadd only runs inside a completion widget: stand in for it and print what it is given.
	offered := w.dailyShell("zsh", "-fc", `compdef() { : }
compadd() { local a; for a; do :; done; print -rl -- "${(@P)a}" }
source "$1"
words=(kandev resume ""); CURRENT=3; _kandev`, "zsh", script)
	if strings.Fields(offered)[0] != newer || !strings.Contains(offered, older) {
		t.Fatalf("zsh: kandev resume <TAB> offers:\n%s", offered)
	}
}

func TestCompletion_UnknownShellIsAUsageError(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := w.run("completion", "tcsh")
	if r.code != 2 || !strings.Contains(r.stderr, "bash") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("%s", r)
	}
}

type dailyDoctorReport struct {
	Checks []struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Message string `json:"message"`
		Fix     string `json:"fix"`
	} `json:"checks"`
	OK bool `json:"ok"`
}

// problem returns the failed check called name whose message mentions about, or fails.
func (d dailyDoctorReport) problem(t *testing.T, name, about string) (message, fix string) {
	t.Helper()
	for _, c := range d.Checks {
		if !c.OK && c.Name == name && strings.Contains(c.Message, about) {
			return c.Message, c.Fix
		}
	}
	t.Fatalf("doctor did not report %s (%s): %+v", name, about, d.Checks)
	return "", ""
}

// dailyPrivateHome makes the world's home 0700, as kandev creates ~/.kandev
// (the test's temporary directory is 0755).
func dailyPrivateHome(w *world) {
	w.t.Helper()
	if err := os.Chmod(w.home, 0o700); err != nil {
		w.t.Fatal(err)
	}
}

func TestDoctor_HealthyHomeExitsZero(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dailyPrivateHome(w)
	w.mustRun("start", "/say hi")
	var d dailyDoctorReport
	decodeJSON(t, w.mustRun("--json", "doctor").stdout, &d)
	if !d.OK {
		t.Fatalf("a fresh home is not healthy: %+v", d.Checks)
	}
	names := map[string]string{}
	for _, c := range d.Checks {
		names[c.Name] = c.Message
	}
	if !strings.Contains(names["agent demo"], "resume=true") || !strings.Contains(names["agent claude"], "not installed") || names["git"] == "" {
		t.Fatalf("checks: %+v", d.Checks)
	}
	if r := w.mustRun("doctor"); !strings.Contains(r.stdout, "healthy") {
		t.Fatalf("text report: %s", r)
	}
}

// dailyKillOwnerMidTurn sends a long prompt to session id and SIGKILLs the
// kandev process that owns the turn, the way a crash or a closed laptop would.
func dailyKillOwnerMidTurn(w *world, id, prompt string) {
	w.t.Helper()
	cmd := exec.Command(kandevBin, "prompt", id, prompt)
	cmd.Dir, cmd.Env = w.cwd, w.env
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		if s, err := dailyRecord(w.home, id); err == nil && s.AgentPID != 0 && proc.ProcessAlive(s.AgentPID, s.AgentStart) {
			kill(s.AgentPID, syscall.SIGKILL)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The turn counts as begun once its turn_started is in the log: a
		// record that names a turn the log never started is nothing to resume.
		s, err := dailyRecord(w.home, id)
		if err == nil && s.State == state.StateRunning && s.CurrentTurn != "" && turnStartedInLog(w.home, id, s.CurrentTurn) {
			break
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("session %s never ran the turn: %+v", id, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.killOwner(id, cmd) // the owner wherever it runs, and the command
}

func dailyRecord(home, id string) (*state.Session, error) {
	h, err := state.OpenHome(home)
	if err != nil {
		return nil, err
	}
	return h.LoadSession(id)
}

func TestDoctor_ReportsEachProblemWithTheCommandThatFixesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dailyPrivateHome(w)
	w.config("[agents.ghost]\ncommand = [\"kandev-no-such-agent-xyz\"]\ninstall_hint = \"get ghost from ghost.example\"\n")
	h, _ := state.OpenHome(w.home)

	// A log whose last write was cut short.
	torn, _ := w.start("--linger", "0", "/say torn") // no live owner: the log is damaged by hand
	f, _ := os.OpenFile(h.LogPath(torn), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":99,"ty`)
	f.Close()
	// A turn whose owner was killed.
	interrupted, _ := w.start("/say before the crash")
	dailyKillOwnerMidTurn(w, interrupted, "/sleep 60000")
	// A finished session whose recorded agent process still runs.
	orphaned, _ := w.start("/say done")
	w.mustRun("done", orphaned)
	sleeper := exec.Command("sleep", "60")
	sleeper.Start()
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	h.UpdateSession(orphaned, func(s *state.Session) error {
		s.AgentPID, s.AgentStart = sleeper.Process.Pid, proc.ProcessStart(sleeper.Process.Pid)
		return nil
	})
	// A record others can read, and one that is not JSON.
	os.Chmod(h.RecordPath(torn), 0o644)
	os.WriteFile(h.RecordPath("broken"), []byte("{not json"), 0o600)

	r := w.run("--json", "doctor")
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("doctor with problems: want exit 1 and one line on stderr\n%s", r)
	}
	var d dailyDoctorReport
	decodeJSON(t, r.stdout, &d) // one JSON object, no error object after it
	if d.OK {
		t.Fatal(`"ok" is true although checks failed`)
	}
	fixes := map[string]string{}
	for _, p := range []struct{ name, about, fix string }{
		{"session " + torn, "torn", "kandev repair " + torn},
		{"session " + interrupted, "", "kandev resume " + interrupted},
		{"session " + orphaned, "orphaned agent", "kill " + strconv.Itoa(sleeper.Process.Pid)},
		{"permissions", h.RecordPath(torn), "chmod 600 " + h.RecordPath(torn)},
		{"session broken", "unreadable", "mv " + h.RecordPath("broken")},
		{"agent ghost", "not installed", "get ghost from ghost.example"},
	} {
		msg, fix := d.problem(t, p.name, p.about)
		if !strings.HasPrefix(fix, p.fix) {
			t.Errorf("%s: %q: fix %q, want it to start with %q", p.name, msg, fix, p.fix)
		}
		fixes[p.name] = fix
	}

	text := w.run("doctor")
	if text.code != 1 || !strings.Contains(text.stdout, "fix: kandev repair "+torn) || !strings.Contains(text.stderr, "problem") {
		t.Fatalf("text report:\n%s", text)
	}

	// Running the fixes leaves a healthy home.
	w.mustRun("repair", torn)
	w.mustRun("resume", interrupted)
	sleeper.Process.Kill()
	sleeper.Wait()
	os.Chmod(h.RecordPath(torn), 0o600)
	os.Rename(h.RecordPath("broken"), h.RecordPath("broken")+".broken")
	w.config("")
	var after dailyDoctorReport
	r = w.run("--json", "doctor")
	decodeJSON(t, r.stdout, &after)
	if r.code != 0 || !after.OK {
		t.Fatalf("after running the fixes %v, doctor still finds: %+v", fixes, after.Checks)
	}
}

func TestPrune_RemovesFinishedSessionsButNeverLiveOnes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h, _ := state.OpenHome(w.home)
	done, _ := w.start("remember APPLE")
	archived, _ := w.start("remember PEAR")
	idle, _ := w.start("remember PLUM")
	owned, _ := w.start("remember FIG")
	leased, _ := w.start("remember KIWI")
	w.mustRun("done", done)
	w.mustRun("archive", archived)
	w.mustRun("done", owned)
	// An editor attached to this one before it was marked done; its lease is still live.
	w.mustRun("resume", leased, "--holder", "editor:vscode")
	w.mustRun("done", leased)
	// This test process owns the finished session, as a kandev process would.
	lock, err := h.AcquireOwner(owned)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	demoFile := map[string]string{}
	for _, id := range []string{done, archived, idle, owned, leased} {
		demoFile[id] = filepath.Join(h.DemoAgentDir(), w.session(id).ResumeToken+".json")
		if _, err := os.Stat(demoFile[id]); err != nil {
			t.Fatalf("the demo agent's file for %s: %v", id, err)
		}
	}
	before := dailyFiles(t, w.home)

	var dry struct {
		Pruned []string `json:"pruned"`
		DryRun bool     `json:"dry_run"`
	}
	decodeJSON(t, w.mustRun("--json", "prune", "--dry-run").stdout, &dry)
	slices.Sort(dry.Pruned)
	if want := dailySorted(done, archived); !dry.DryRun || !slices.Equal(dry.Pruned, want) {
		t.Fatalf("prune --dry-run lists %v (dry_run %v), want %v", dry.Pruned, dry.DryRun, want)
	}
	if after := dailyFiles(t, w.home); !slices.Equal(before, after) {
		t.Fatalf("prune --dry-run changed the home:\nbefore %v\nafter  %v", before, after)
	}

	r := w.mustRun("prune")
	if !strings.Contains(r.stdout, "kept "+owned+": a live kandev process owns it") || !strings.Contains(r.stdout, "kept "+leased+": attached to editor:vscode") {
		t.Errorf("prune does not say why it kept the owned and the leased sessions:\n%s", r.stdout)
	}
	for _, id := range []string{done, archived} {
		for _, p := range append(h.SessionFiles(id), demoFile[id]) {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("pruned session %s left %s", id, p)
			}
		}
	}
	for _, id := range []string{idle, owned, leased} {
		for _, p := range []string{h.RecordPath(id), h.LogPath(id), demoFile[id]} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("kept session %s lost %s", id, p)
			}
		}
	}
	var l struct{ Sessions []struct{ ID string } }
	decodeJSON(t, w.mustRun("--json", "list").stdout, &l)
	listed := map[string]bool{}
	for _, s := range l.Sessions {
		listed[s.ID] = true
	}
	if listed[done] || listed[archived] || !listed[idle] || !listed[owned] || !listed[leased] {
		t.Fatalf("list after prune: %+v", l.Sessions)
	}

	// Once its owner is gone, the finished session goes too.
	lock.Release()
	decodeJSON(t, w.mustRun("--json", "prune", "--state", "cancelled").stdout, &dry)
	if len(dry.Pruned) != 0 {
		t.Fatalf("--state cancelled pruned %v", dry.Pruned)
	}
	decodeJSON(t, w.mustRun("--json", "prune", "--state", "COMPLETED").stdout, &dry)
	if !slices.Equal(dry.Pruned, []string{owned}) {
		t.Fatalf("prune --state COMPLETED: %v", dry.Pruned)
	}
}

func TestPrune_OlderThanComparesLastActivity(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	h, _ := state.OpenHome(w.home)
	old, _ := w.start("/say old")
	recent, _ := w.start("/say recent")
	w.mustRun("done", old)
	w.mustRun("done", recent)
	h.UpdateSession(old, func(s *state.Session) error {
		s.LastActivityAt = time.Now().Add(-40 * 24 * time.Hour)
		return nil
	})
	var out struct{ Pruned []string }
	decodeJSON(t, w.mustRun("--json", "prune", "--older-than", "30d").stdout, &out)
	if !slices.Equal(out.Pruned, []string{old}) {
		t.Fatalf("--older-than 30d pruned %v, want [%s]", out.Pruned, old)
	}
	for _, args := range [][]string{{"prune", "--older-than", "soon"}, {"prune", "--state", "RUNNING"}} {
		if r := w.run(args...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("kandev %v: want a one-line usage error (exit 2)\n%s", args, r)
		}
	}
}

// dailyFiles lists every file below dir with its size and mode.
func dailyFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			out = append(out, p+" "+strconv.FormatInt(info.Size(), 10)+" "+info.Mode().String())
		}
		return nil
	})
	return out
}

func dailySorted(s ...string) []string {
	slices.Sort(s)
	return s
}

// turnStartedInLog reports whether session id's log holds turn's turn_started.
func turnStartedInLog(home, id, turn string) bool {
	evs, _, _ := eventlog.ReadAll(filepath.Join(home, "sessions", id+".jsonl"))
	for _, e := range evs {
		if e.Type == eventlog.EventTurnStarted && e.TurnID == turn {
			return true
		}
	}
	return false
}
