//go:build darwin

package schedule

import (
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// plistPath is where a kandev job's launchd agent lives.
func plistPath(label string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "Library", "LaunchAgents", label+".plist"), nil
}

// submitLaunchd installs a user agent that runs j at its calendar minute
// (launchd has no seconds; the minute at or after j.At) and loads it. The
// job removes nothing itself: kandev recover ignores a run with nothing to
// do, and Cancel (or the next schedule) unloads it.
func submitLaunchd(j Job) (string, error) {
	label := "dev.kandev." + j.Name
	path, err := plistPath(label)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(LaunchdPlist(label, j)), 0o600); err != nil {
		return "", err
	}
	if out, err := exec.Command("launchctl", "load", path).CombinedOutput(); err != nil {
		return "", fmt.Errorf("launchctl load: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return label, nil
}

// findLaunchd finds the agent submitLaunchd wrote for the job named name.
func findLaunchd(name string) (string, bool) {
	label := "dev.kandev." + name
	path, err := plistPath(label)
	if err != nil {
		return "", false
	}
	_, err = os.Stat(path)
	return label, err == nil
}

func cancelLaunchd(label string) error {
	path, err := plistPath(label)
	if err != nil {
		return err
	}
	_ = exec.Command("launchctl", "unload", path).Run()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// LaunchdPlist is the agent's property list for j.
func LaunchdPlist(label string, j Job) string {
	t := j.At.Local()
	if t.Second() != 0 || t.Nanosecond() != 0 {
		t = t.Truncate(60 * 1e9).Add(60 * 1e9)
	}
	var args, env strings.Builder
	for _, a := range j.Argv {
		fmt.Fprintf(&args, "<string>%s</string>", html.EscapeString(a))
	}
	for _, e := range j.Env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Fprintf(&env, "<key>%s</key><string>%s</string>", html.EscapeString(k), html.EscapeString(v))
	}
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>Label</key><string>%s</string>
<key>ProgramArguments</key><array>%s</array>
<key>EnvironmentVariables</key><dict>%s</dict>
<key>StartCalendarInterval</key><dict><key>Month</key><integer>%d</integer><key>Day</key><integer>%d</integer><key>Hour</key><integer>%d</integer><key>Minute</key><integer>%d</integer></dict>
</dict></plist>
`, html.EscapeString(label), args.String(), env.String(), int(t.Month()), t.Day(), t.Hour(), t.Minute())
}
