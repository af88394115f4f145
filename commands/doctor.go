package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/autostart"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// doctorCmd is kandev doctor: it checks the home, the agents and git, and
// says for each problem the command that fixes it.
type doctorCmd struct{}

// Help shows an example.
func (c *doctorCmd) Help() string {
	return "Example:\n  kandev doctor\n\nExits 0 when everything is healthy, 1 when it found problems (--json lists every check)."
}

// check is one line of the doctor's report.
type check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// probeTimeout bounds the handshake with each installed agent.
const probeTimeout = 8 * time.Second

// Run runs every check and prints the report.
func (c *doctorCmd) Run(env *Env) error {
	h, homeErr := env.Home()
	var checks []check
	if homeErr != nil {
		// A home it cannot set up is one more problem: the checks read it as it is.
		dir, err := env.homeDir()
		if err != nil || errors.Is(homeErr, state.ErrNewerFormat) {
			return homeErr
		}
		h = &state.Home{Dir: dir}
		checks = append(checks, check{Name: "home", Message: "cannot be set up, so every command fails: " + homeErr.Error(), Fix: writeFix(dir, homeErr)})
	}
	checks = append(checks, homeChecks(h)...)
	checks = append(checks, writeChecks(h)...)
	checks = append(checks, linkChecks(h)...)
	checks = append(checks, formatCheck(h))
	cfg, cfgCheck := configCheck(env, h)
	if cfgCheck != nil {
		checks = append(checks, *cfgCheck)
	}
	mode := env.G.Permissions
	if mode == "" {
		mode = cfg.Permissions.Mode
	}
	if mode == "" {
		mode = owner.PermAsk
	}
	if nc := notifyCheck(cfg); nc != nil {
		checks = append(checks, *nc)
	}
	checks = append(checks, sessionChecks(probeWith(h, cfg, mode, "", false, env.Now()))...)
	checks = append(checks, leftoverChecks(h, env.Now())...)
	checks = append(checks, agentChecks(env.Ctx, h, cfg)...)
	checks = append(checks, containerChecks(env.Ctx, h, cfg)...)
	checks = append(checks, gitCheck())
	checks = append(checks, autostartCheck(h.Dir))

	problems := 0
	for _, ch := range checks {
		if !ch.OK {
			problems++
		}
	}
	env.Out.Object(doctorOutput{Checks: checks, OK: problems == 0}, func(w io.Writer) {
		fmt.Fprintf(w, "kandev home %s\n", h.Dir)
		for _, ch := range checks {
			mark := "ok  "
			if !ch.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "%s  %s: %s\n", mark, ch.Name, ch.Message)
			if !ch.OK && ch.Fix != "" {
				fmt.Fprintf(w, "      fix: %s\n", ch.Fix)
			}
		}
		if problems == 0 {
			fmt.Fprintln(w, "everything looks healthy")
		}
	})
	if problems == 0 {
		return nil
	}
	return reportedf("doctor found %d problem(s): run the fix shown under each FAIL line, then kandev doctor again", problems)
}

// homeChecks are the permissions of the home: directories 0700, files 0600,
// because session logs hold prompts, code and tool output.
func homeChecks(h *state.Home) []check {
	var out []check
	bad := func(path string, mode fs.FileMode, want string) {
		out = append(out, check{Name: "permissions", Message: fmt.Sprintf("%s is %04o: others can read it (want %s)", path, mode.Perm(), want),
			Fix: "chmod " + strings.TrimPrefix(want, "0") + " " + shellQuote(path)})
	}
	files := 0
	for _, dir := range []string{h.Dir, filepath.Join(h.Dir, "sessions"), h.DemoAgentDir()} {
		st, err := os.Stat(dir)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				out = append(out, check{Name: "permissions", Message: err.Error(), Fix: "check the owner and permissions of " + dir})
			}
			continue
		}
		if st.Mode().Perm()&0o077 != 0 {
			bad(dir, st.Mode(), "0700")
		}
		if dir == h.Dir {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			out = append(out, check{Name: "permissions", Message: "cannot list " + dir + ": " + err.Error(), Fix: "chmod 700 " + shellQuote(dir)})
			continue
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			files++
			if info.Mode().Perm()&0o077 != 0 {
				bad(filepath.Join(dir, e.Name()), info.Mode(), "0600")
			}
		}
	}
	if st, err := os.Stat(h.ConfigPath()); err == nil && st.Mode().Perm()&0o077 != 0 {
		bad(h.ConfigPath(), st.Mode(), "0600") // it may hold API keys in [agents.NAME] env
	}
	if len(out) == 0 {
		out = append(out, check{Name: "permissions", OK: true, Message: fmt.Sprintf("home and %d file(s) are private (0700/0600)", files)})
	}
	return out
}

// writeChecks say which of the home, its sessions folder and the files in
// it this process cannot write (a read-only mount, a file made read-only):
// there a prompt fails, so doctor reads them without writing and says so.
func writeChecks(h *state.Home) []check {
	var bad []string
	fix := ""
	note := func(path string, err error) {
		bad = append(bad, fmt.Sprintf("%s (%v)", path, err))
		if fix == "" {
			fix = writeFix(path, err)
		}
	}
	sessions := filepath.Join(h.Dir, "sessions")
	for _, dir := range []string{h.Dir, sessions} {
		if st, err := os.Stat(dir); err == nil { // a missing one homeChecks reported
			if err := writable(dir, st); err != nil {
				note(dir, err)
			}
		}
	}
	files := 0
	if len(bad) == 0 { // in a folder it cannot write, every file would be named
		entries, _ := os.ReadDir(sessions)
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			files++
			if path := filepath.Join(sessions, e.Name()); writable(path, info) != nil {
				note(path, writable(path, info))
			}
		}
	}
	if len(bad) == 0 {
		return []check{{Name: "writable", OK: true, Message: fmt.Sprintf("the home, its sessions folder and its %d file(s) can be written", files)}}
	}
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
	}
	return []check{{Name: "writable", Message: "cannot be written, so a prompt fails there: " + strings.Join(bad, ", "), Fix: fix}}
}

// writeFix is what makes path writable again: a read-only file system is
// remounted (or another home used); permissions are given back.
func writeFix(path string, err error) string {
	if errors.Is(err, syscall.EROFS) {
		return "remount the file system of " + shellQuote(path) + " read-write, or use another home (--home DIR or KANDEV_HOME)"
	}
	if st, serr := os.Stat(path); serr == nil && !st.IsDir() {
		return "chmod 600 " + shellQuote(path)
	}
	return "chmod 700 " + shellQuote(path) + " (and check who owns it: ls -ld " + shellQuote(path) + ")"
}

// linkChecks name the symbolic links in the sessions directory: kandev
// refuses to open a session file through one (it could point outside the
// home), so each stops its session's commands until it is removed.
func linkChecks(h *state.Home) []check {
	dir := filepath.Join(h.Dir, "sessions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // homeChecks reported it
	}
	var out []check
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		target, _ := os.Readlink(path)
		out = append(out, check{Name: "symlink", Message: fmt.Sprintf("%s is a symbolic link (to %s): kandev refuses to follow it, so its session's commands fail", path, target),
			Fix: "rm " + shellQuote(path) + " (kandev makes the file again where it needs one)"})
	}
	return out
}

// formatCheck reports the home's format and how many records are of an
// older format (upgraded when next written); records of a newer one are
// reported by sessionCheck.
func formatCheck(h *state.Home) check {
	home, err := h.HomeFormat()
	if err != nil {
		return check{Name: "format", Message: err.Error(), Fix: "echo " + strconv.Itoa(state.Format) + " > " + shellQuote(h.FormatPath())}
	}
	older := 0
	entries, _ := os.ReadDir(filepath.Join(h.Dir, "sessions"))
	for _, e := range entries {
		if id, ok := recordID(e.Name()); ok {
			if s, err := h.LoadSession(id); err == nil && s.Format < state.Format {
				older++
			}
		}
	}
	msg := fmt.Sprintf("home format %d (this kandev writes format %d)", home, state.Format)
	if older > 0 {
		msg += fmt.Sprintf("; %d record(s) of an older format, upgraded in place when next written", older)
	}
	return check{Name: "format", OK: true, Message: msg}
}

// configCheck loads the config; a broken one is reported and the built-in
// profiles are checked instead.
func configCheck(env *Env, h *state.Home) (*config.Config, *check) {
	cfg, err := env.Config()
	if err != nil {
		path := env.G.Config
		if path == "" {
			path = h.ConfigPath()
		}
		return &config.Config{}, &check{Name: "config", Message: err.Error(), Fix: "fix the TOML in " + path}
	}
	if _, err := os.Stat(h.ConfigPath()); env.G.Config == "" && errors.Is(err, os.ErrNotExist) {
		return cfg, &check{Name: "config", OK: true, Message: "no config file: built-in defaults"}
	}
	return cfg, &check{Name: "config", OK: true, Message: "readable"}
}

// agentChecks report every profile: installed or how to install it, and for
// installed ones the capabilities their handshake advertises. A missing
// agent is a problem only when the config names it.
func agentChecks(ctx context.Context, h *state.Home, cfg *config.Config) []check {
	profiles := acp.Profiles(cfg)
	def, _ := acp.DefaultAgent(cfg)
	out := make([]check, len(profiles))
	var wg sync.WaitGroup
	for i, p := range profiles {
		_, configured := cfg.Agents[p.Name]
		wanted := configured || p.Name == def
		name := "agent " + p.Name
		if !p.Installed() {
			msg := "not installed (" + strings.Join(p.Command, " ") + " is not on PATH); to use it: " + p.InstallHint
			if wanted {
				msg = "not installed, but the config uses it (" + strings.Join(p.Command, " ") + " is not on PATH)"
			}
			out[i] = check{Name: name, OK: !wanted, Message: msg, Fix: p.InstallHint}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			caps, err := acp.ProbeWithin(ctx, p, h.Dir, probeTimeout)
			if err != nil {
				out[i] = check{Name: name, Message: "installed, but the ACP handshake failed: " + firstLine(acp.DescribeError(err)),
					Fix: "check that `" + strings.Join(p.Command, " ") + "` speaks ACP on stdio (" + p.InstallHint + ")"}
				return
			}
			out[i] = check{Name: name, OK: true, Message: "installed: " + capsSummary(caps)}
		}()
	}
	wg.Wait()
	return out
}

func gitCheck() check {
	path, err := exec.LookPath("git")
	if err != nil {
		return check{Name: "git", Message: "git is not on PATH: worktree sessions and most agents need it",
			Fix: "install git (apt install git, brew install git, or https://git-scm.com/downloads)"}
	}
	ver, err := exec.Command(path, "--version").Output()
	if err != nil {
		return check{Name: "git", Message: path + " does not run: " + err.Error(), Fix: "reinstall git"}
	}
	return check{Name: "git", OK: true, Message: strings.TrimSpace(string(ver))}
}

// shellQuote quotes a path for a command line a user can paste.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// autostartCheck says whether the login-time job is on for the home; off
// is no problem, only a choice.
func autostartCheck(home string) check {
	if abs, err := filepath.Abs(home); err == nil {
		home = abs
	}
	return check{Name: "autostart", OK: true, Message: autostartLine("status", home, autostart.Check(home))}
}
