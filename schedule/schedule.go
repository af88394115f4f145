// Package schedule hands one future command to the operating system's
// scheduler (systemd timers, launchd, at), so that no kandev process has to
// stay alive to wait for it. A scheduled command is named by a
// state.ScheduledRecover, which is enough to show it and to cancel it.
package schedule

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/kandev/kandev/state"
)

// Scheduler names, as recorded in ScheduledRecover.Via.
const (
	SystemdRun = "systemd-run"
	Launchd    = "launchd"
	At         = "at"
)

// ErrNoScheduler: no scheduler on this machine accepted the job.
var ErrNoScheduler = errors.New("no scheduler available (systemd-run --user, launchd or at)")

// Job is one command to run once at a time.
type Job struct {
	Name string    // unique and safe as a unit or label name, e.g. kandev-recover-<id>
	At   time.Time // when; never run before it
	Argv []string  // the command, argv[0] an absolute path
	Env  []string  // KEY=VALUE the command needs (KANDEV_HOME, ...)
}

// Order is the schedulers to try on goos, most precise first: launchd on
// macOS, else a systemd user timer, then at.
func Order(goos string) []string {
	if goos == "darwin" {
		return []string{Launchd, At}
	}
	return []string{SystemdRun, At}
}

// Submit hands j to the first scheduler of Order that accepts it.
func Submit(goos string, j Job) (state.ScheduledRecover, error) {
	var errs []string
	for _, via := range Order(goos) {
		h, err := submitVia(via, j)
		if err == nil {
			return state.ScheduledRecover{At: j.At.UTC(), Via: via, Handle: h}, nil
		}
		errs = append(errs, via+": "+err.Error())
	}
	return state.ScheduledRecover{}, fmt.Errorf("%w: %s", ErrNoScheduler, strings.Join(errs, "; "))
}

// Cancel removes a scheduled job; one that already ran or is gone is no error.
func Cancel(s state.ScheduledRecover) error {
	switch s.Via {
	case SystemdRun:
		out, err := exec.Command("systemctl", "--user", "stop", s.Handle+".timer").CombinedOutput()
		if err != nil && !strings.Contains(string(out), "not loaded") {
			return fmt.Errorf("systemctl --user stop %s.timer: %v: %s", s.Handle, err, strings.TrimSpace(string(out)))
		}
		return nil
	case At:
		out, err := exec.Command("atrm", s.Handle).CombinedOutput()
		if err != nil && !strings.Contains(string(out), "Cannot find") {
			return fmt.Errorf("atrm %s: %v: %s", s.Handle, err, strings.TrimSpace(string(out)))
		}
		return nil
	case Launchd:
		return cancelLaunchd(s.Handle)
	}
	return fmt.Errorf("unknown scheduler %q", s.Via)
}

// Settle resolves a job whose scheduling was cut off (sc.Pending: the
// process that asked was killed before it recorded the answer): the job as
// a scheduler holds it, found by its name, or nil when none took it. A
// settled sc comes back as it is.
func Settle(goos string, sc *state.ScheduledRecover) *state.ScheduledRecover {
	if sc == nil || !sc.Pending {
		return sc
	}
	for _, via := range Order(goos) {
		if h, ok := findVia(via, sc.Name); ok {
			return &state.ScheduledRecover{At: sc.At, Via: via, Handle: h, Name: sc.Name}
		}
	}
	return nil
}

// atTag marks an at job with its name (at knows jobs by number only), so
// that Settle can find it.
const atTag = "# kandev-job: "

// findVia looks for the job named name in one scheduler.
func findVia(via, name string) (string, bool) {
	if name == "" {
		return "", false
	}
	switch via {
	case SystemdRun:
		out, err := exec.Command("systemctl", "--user", "show", name+".timer", "--property=LoadState", "--value").Output()
		return name, err == nil && strings.TrimSpace(string(out)) == "loaded"
	case At:
		out, err := exec.Command("atq").Output()
		if err != nil {
			return "", false
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			script, err := exec.Command("at", "-c", f[0]).Output()
			if err == nil && strings.Contains(string(script), "\n"+atTag+name+"\n") {
				return f[0], true
			}
		}
	case Launchd:
		return findLaunchd(name)
	}
	return "", false
}

func submitVia(via string, j Job) (string, error) {
	switch via {
	case SystemdRun:
		if _, err := exec.LookPath("systemd-run"); err != nil {
			return "", err
		}
		out, err := exec.Command("systemd-run", SystemdArgs(j)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%v: %s", err, firstLine(string(out)))
		}
		return j.Name, nil
	case At:
		if _, err := exec.LookPath("at"); err != nil {
			return "", err
		}
		cmd := exec.Command("at", "-t", AtTime(j.At))
		cmd.Stdin = strings.NewReader(AtScript(j))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%v: %s", err, firstLine(string(out)))
		}
		n, ok := AtJobNumber(string(out))
		if !ok {
			return "", fmt.Errorf("at gave no job number: %s", firstLine(string(out)))
		}
		return n, nil
	case Launchd:
		return submitLaunchd(j)
	}
	return "", fmt.Errorf("unknown scheduler %q", via)
}

// SystemdArgs are systemd-run's arguments for j: a transient user timer
// for the exact second (AccuracySec=1s; the default would be a minute),
// removed once it ran.
func SystemdArgs(j Job) []string {
	args := []string{"--user", "--unit=" + j.Name, "--collect", "--quiet",
		"--on-calendar=" + j.At.UTC().Format("2006-01-02 15:04:05") + " UTC",
		"--timer-property=AccuracySec=1s"}
	for _, e := range j.Env {
		args = append(args, "--setenv="+e)
	}
	return append(append(args, "--"), j.Argv...)
}

// AtTime is at -t's time for t: at runs jobs on the minute, so the minute
// at or after t, in local time ([[CC]YY]MMDDhhmm).
func AtTime(t time.Time) string {
	m := t.Truncate(time.Minute)
	if m.Before(t) {
		m = m.Add(time.Minute)
	}
	return m.Local().Format("200601021504")
}

// AtScript is the shell script at runs for j.
func AtScript(j Job) string {
	var b strings.Builder
	if j.Name != "" {
		b.WriteString(atTag + j.Name + "\n")
	}
	for _, e := range j.Env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Fprintf(&b, "%s=%s; export %s\n", k, shellQuote(v), k)
	}
	b.WriteString("exec")
	for _, a := range j.Argv {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString("\n")
	return b.String()
}

var reAtJob = regexp.MustCompile(`(?m)^job (\d+) at `)

// AtJobNumber reads the job number from at's answer ("job 7 at Tue Dec  1 15:01:00 2026").
func AtJobNumber(out string) (string, bool) {
	m := reAtJob.FindStringSubmatch(out)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
