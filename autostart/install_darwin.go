//go:build darwin

package autostart

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kandev/kandev/internal/safefile"
)

// plistPath is the home's launchd agent, which launchd loads at login.
func plistPath(home string) (label, path string, err error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", "", fmt.Errorf("%w: HOME is not set, so there is no ~/Library/LaunchAgents", ErrNoScheduler)
	}
	label = "dev.kandev." + Name(home)
	return label, filepath.Join(h, "Library", "LaunchAgents", label+".plist"), nil
}

// Enable writes the launchd agent. It is not loaded now: loading would run
// it at once (RunAtLoad); launchd loads it at the next login.
func Enable(j Job) (Status, error) {
	if _, err := exec.LookPath("launchctl"); err != nil {
		return Status{}, fmt.Errorf("%w: launchctl is not on PATH", ErrNoScheduler)
	}
	label, path, err := plistPath(j.Home)
	if err != nil {
		return Status{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Status{}, fmt.Errorf("cannot create %s: %w", filepath.Dir(path), err)
	}
	if err := safefile.WriteFileAtomic(path, []byte(LaunchdPlist(label, j))); err != nil {
		return Status{}, fmt.Errorf("cannot install the launchd agent: %w", err)
	}
	return Status{On: true, Via: "launchd", Where: path}, nil
}

// Disable removes the home's launchd agent (unloading it first, in case
// it is loaded); one that is not there is no error.
func Disable(home string) (Status, error) {
	_, path, err := plistPath(home)
	if err != nil {
		return Status{}, err
	}
	if _, err := os.Stat(path); err == nil {
		_ = exec.Command("launchctl", "unload", path).Run()
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return Status{On: true, Via: "launchd", Where: path}, fmt.Errorf("cannot remove %s: %w", path, err)
	}
	return Status{Via: "launchd", Where: path}, nil
}

// Check reports whether the home's launchd agent is installed.
func Check(home string) Status {
	_, path, err := plistPath(home)
	if err != nil {
		return Status{Via: "launchd"}
	}
	_, err = os.Stat(path)
	return Status{On: err == nil, Via: "launchd", Where: path}
}
