package notify

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestCheckCommand_SaysWhatKeepsTheHookFromRunning(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the executable bit is a unix rule")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "hook")
	plain := filepath.Join(dir, "plain")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644)
	cases := []struct {
		name    string
		command []string
		want    string // "" : no problem
	}{
		{"no hook", nil, ""},
		{"a program on PATH", []string{"sh", "-c", "cat"}, ""},
		{"an executable file", []string{exe}, ""},
		{"a program not on PATH", []string{"kandev-no-such-hook-x"}, "not on PATH"},
		{"a file that does not exist", []string{filepath.Join(dir, "missing")}, "does not exist"},
		{"a file that is not executable", []string{plain}, "not executable"},
		{"a directory", []string{dir}, "is a directory"},
		{"an empty program", []string{""}, "empty program"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			problem, fix := CheckCommand(c.command)
			if c.want == "" {
				if problem != "" {
					t.Fatalf("a working hook reported: %s", problem)
				}
				return
			}
			if !strings.Contains(problem, c.want) || fix == "" {
				t.Fatalf("problem %q (fix %q), want it to say %q and give a fix", problem, fix, c.want)
			}
		})
	}
}
