package e2e_test

// kandev autostart on Linux: a systemd user unit in the world's own
// XDG_CONFIG_HOME (systemd reads it there too), so the tests never touch
// the real one. The machines the tests run on have no systemd user
// instance, so a systemctl on PATH stands in for the user's manager and
// logs what it is asked; the unit itself is what systemd would run.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// autostartWorld is a world with its own XDG_CONFIG_HOME and a systemctl
// that answers as a running user manager would (or fails, when manager is
// false) and logs its calls.
func autostartWorld(t *testing.T, manager bool) (w *world, unitDir, calls string) {
	w = newWorld(t)
	xdg, bin := t.TempDir(), t.TempDir()
	calls = filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho \"$@\" >> " + calls + "\nexit 0\n"
	if !manager {
		script = "#!/bin/sh\necho \"$@\" >> " + calls + "\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n"
	}
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "XDG_CONFIG_HOME="+xdg)
	w.withPath(bin + string(os.PathListSeparator) + os.Getenv("PATH"))
	return w, filepath.Join(xdg, "systemd", "user"), calls
}

// files lists what is under dir (relative paths), "" for nothing.
func files(dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return strings.Join(out, ",")
}

// unitFile is the one unit under dir.
func unitFile(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "kandev-recover-*.service"))
	if len(m) != 1 {
		t.Fatalf("want one kandev unit in %s, found %q", dir, m)
	}
	return m[0]
}

func TestAutostart_EnableInstallsAnEnabledUserUnitDoctorShowsItAndDisableRemovesIt(t *testing.T) {
	t.Parallel()
	w, dir, calls := autostartWorld(t, true)
	if r := w.run("doctor"); !strings.Contains(r.stdout, "autostart off for ") {
		t.Fatalf("doctor before enable:\n%s", r.stdout)
	}
	r := w.mustRun("autostart", "enable")
	if !strings.Contains(r.stdout, "autostart on: at login, kandev recover --all runs once for "+w.home) {
		t.Fatalf("enable says: %s", r)
	}
	unit := unitFile(t, dir)
	link := filepath.Join(dir, "default.target.wants", filepath.Base(unit))
	if target, err := os.Readlink(link); err != nil || target != unit {
		t.Fatalf("the unit is not enabled (default.target.wants link %s -> %q, %v)", link, target, err)
	}
	b, _ := os.ReadFile(unit)
	if !strings.Contains(string(b), `Environment="KANDEV_HOME=`+w.home+`"`) || !strings.Contains(string(b), `"recover" "--all"`) {
		t.Fatalf("the unit does not recover this home:\n%s", b)
	}
	if c, _ := os.ReadFile(calls); !strings.Contains(string(c), "--user daemon-reload") {
		t.Fatalf("systemctl was not asked to reload: %q", c)
	}
	if r := w.run("doctor"); !strings.Contains(r.stdout, "autostart on for "+w.home+" (systemd "+unit+")") {
		t.Fatalf("doctor after enable:\n%s", r.stdout)
	}
	var st struct {
		Autostart struct {
			Home  string
			On    bool
			Via   string
			Where string
		}
	}
	decodeJSON(t, w.mustRun("--json", "autostart", "status").stdout, &st)
	if !st.Autostart.On || st.Autostart.Via != "systemd" || st.Autostart.Where != unit || st.Autostart.Home != w.home {
		t.Fatalf("autostart status --json: %+v", st)
	}
	// Enabling again replaces it; disabling removes both files.
	w.mustRun("autostart", "enable")
	w.mustRun("autostart", "disable")
	if got := files(dir); got != "default.target.wants" {
		t.Fatalf("disable left %q", got)
	}
	if r := w.mustRun("autostart", "disable"); !strings.Contains(r.stdout, "autostart off") {
		t.Fatalf("a second disable: %s", r)
	}
}

func TestAutostart_WithoutASystemdUserInstanceSaysWhatIsMissingAndWritesNothing(t *testing.T) {
	t.Parallel()
	w, dir, _ := autostartWorld(t, false)
	r := w.run("autostart", "enable")
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "systemctl --user is not available") {
		t.Fatalf("want exit 1 and one line naming what is missing: %s", r)
	}
	if got := files(filepath.Dir(filepath.Dir(dir))); got != "" {
		t.Fatalf("enable without a scheduler wrote %q", got)
	}
	// No systemctl at all.
	w2 := newWorld(t)
	w2.env = append(w2.env, "XDG_CONFIG_HOME="+t.TempDir(), "PATH="+t.TempDir())
	if r := w2.run("autostart", "enable"); r.code != 1 || !strings.Contains(r.stderr, "systemctl is not on PATH") {
		t.Fatalf("without systemctl: %s", r)
	}
}

func TestAutostart_AnUnwritableConfigDirectoryIsOneLineAndNothingHalfInstalled(t *testing.T) {
	t.Parallel()
	w, _, _ := autostartWorld(t, true)
	// A file where the config directory should be: unwritable even for root.
	blocker := filepath.Join(t.TempDir(), "config")
	os.WriteFile(blocker, []byte("x"), 0o600)
	w.env = append(w.env, "XDG_CONFIG_HOME="+blocker)
	r := w.run("autostart", "enable")
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, blocker) {
		t.Fatalf("want exit 1 and one line naming the directory: %s", r)
	}
	if b, _ := os.ReadFile(blocker); string(b) != "x" {
		t.Fatal("the file in the way was changed")
	}
}

// unitCommand is what the unit runs: ExecStart's argv and Environment's
// variables, unquoted as systemd unquotes them.
func unitCommand(t *testing.T, unit string) (argv, env []string) {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			argv = systemdWords(v)
		}
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			env = append(env, systemdWords(v)...)
		}
	}
	if len(argv) == 0 {
		t.Fatalf("no ExecStart in %s", unit)
	}
	return argv, env
}

// systemdWords splits a unit line's double-quoted words.
func systemdWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, esc := false, false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case in && r == '\\':
			esc = true
		case r == '"':
			if in {
				words = append(words, cur.String())
				cur.Reset()
			}
			in = !in
		case in:
			cur.WriteRune(r)
		}
	}
	for i, w := range words {
		words[i] = strings.NewReplacer("%%", "%", "$$", "$").Replace(w)
	}
	return words
}

func TestAutostart_AfterASimulatedRebootTheUnitsCommandContinuesTheTurnOnce(t *testing.T) {
	t.Parallel()
	w, dir, _ := autostartWorld(t, true)
	id, r := w.start()
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("autostart", "enable")
	argv, unitEnv := unitCommand(t, unitFile(t, dir))
	// The reboot: a turn mid-way, then every kandev and agent process of
	// the home killed.
	w.killAt(isType(eventlog.EventAgentMessage), 20*time.Second, "prompt", id, "/say working\n/sleep 30000")
	if st := w.status(id); st.Status.Badge != "needs-resume" {
		t.Fatalf("badge %q after the kill, want needs-resume", st.Status.Badge)
	}
	// At login: exactly what the unit runs, with its environment only
	// (KANDEV_HOME from the unit, not the test's), from another directory.
	login := func() result {
		var env []string
		for _, kv := range w.env {
			if !strings.HasPrefix(kv, "KANDEV_HOME=") {
				env = append(env, kv)
			}
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = append(env, unitEnv...), t.TempDir()
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if err != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return result{out.String(), errb.String(), code}
	}
	if argv[0] != kandevBin && filepath.Base(argv[0]) != filepath.Base(kandevBin) {
		t.Fatalf("the unit runs %q, not this kandev (%s)", argv[0], kandevBin)
	}
	if r := login(); r.code != 0 || !strings.Contains(r.stdout, id+": continued") {
		t.Fatalf("the unit's command: %s", r)
	}
	evs := w.events(id)
	conts := continuationTurns(evs)
	if len(conts) != 1 || turnEnd(evs, conts[0].TurnID) != eventlog.StopEndTurn {
		t.Fatalf("want the turn continued once, to its end: %d continuations", len(conts))
	}
	// A second login continues nothing again.
	if r := login(); r.code != 0 || continuations(w.events(id)) != 1 {
		t.Fatalf("a second login: %s", r)
	}
	if st := w.status(id); st.Status.Badge != "idle" {
		t.Fatalf("badge %q after the login, want idle", st.Status.Badge)
	}
}
