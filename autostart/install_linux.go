//go:build linux

package autostart

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kandev/kandev/internal/safefile"
)

// UnitDir is where the user's systemd manager reads units:
// $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user.
func UnitDir() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "systemd", "user"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w: neither XDG_CONFIG_HOME nor HOME is set, so there is no systemd user unit directory", ErrNoScheduler)
	}
	return filepath.Join(home, ".config", "systemd", "user"), nil
}

// paths are the unit and the default.target.wants link that enables it.
func paths(home string) (unit, link string, err error) {
	dir, err := UnitDir()
	if err != nil {
		return "", "", err
	}
	name := Name(home) + ".service"
	return filepath.Join(dir, name), filepath.Join(dir, "default.target.wants", name), nil
}

// checkSystemd says what is missing for a systemd user unit to run.
func checkSystemd() error {
	if _, err := exec.LookPath("systemctl"); err != nil {
		return fmt.Errorf("%w: systemctl is not on PATH (autostart needs systemd's user instance; without it, run kandev recover --all from your login script)", ErrNoScheduler)
	}
	out, err := exec.Command("systemctl", "--user", "show-environment").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: systemctl --user is not available, no systemd user instance runs for this user (%s); without it, run kandev recover --all from your login script", ErrNoScheduler, firstLine(string(out)))
	}
	return nil
}

// Enable installs j as a systemd user unit and enables it, as systemctl
// --user enable would (a link in default.target.wants).
func Enable(j Job) (Status, error) {
	if err := checkSystemd(); err != nil {
		return Status{}, err
	}
	unit, link, err := paths(j.Home)
	if err != nil {
		return Status{}, err
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return Status{}, fmt.Errorf("cannot create %s: %w", filepath.Dir(link), err)
	}
	if err := safefile.WriteFileAtomic(unit, []byte(SystemdUnit(j))); err != nil {
		return Status{}, fmt.Errorf("cannot install the unit: %w", err)
	}
	_ = os.Remove(link)
	if err := os.Symlink(unit, link); err != nil {
		_ = os.Remove(unit) // nothing half-installed
		return Status{}, fmt.Errorf("cannot enable %s (link %s): %w", unit, link, err)
	}
	// The manager reads the unit at the next login anyway; a reload only
	// lets systemctl --user show it now.
	_ = exec.Command("systemctl", "--user", "daemon-reload").Run()
	return Status{On: true, Via: "systemd", Where: unit}, nil
}

// Disable removes the home's unit and its link; a job that is not there is
// no error.
func Disable(home string) (Status, error) {
	unit, link, err := paths(home)
	if err != nil {
		return Status{}, err
	}
	for _, p := range []string{link, unit} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return Status{On: true, Via: "systemd", Where: unit}, fmt.Errorf("cannot remove %s: %w", p, err)
		}
	}
	if _, err := exec.LookPath("systemctl"); err == nil {
		_ = exec.Command("systemctl", "--user", "daemon-reload").Run()
	}
	return Status{Via: "systemd", Where: unit}, nil
}

// Check reports whether the home's unit is installed and enabled.
func Check(home string) Status {
	unit, link, err := paths(home)
	if err != nil {
		return Status{Via: "systemd"}
	}
	_, uerr := os.Stat(unit)
	_, lerr := os.Stat(link)
	return Status{On: uerr == nil && lerr == nil, Via: "systemd", Where: unit}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
