package state

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAgentLeftoversPossible_OnlyWhileTheLockFileIsMarked(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lock := h.AgentLockPath("s1")
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		t.Fatal(err)
	}
	check := func(what string, want bool) {
		t.Helper()
		if got := h.AgentLeftoversPossible("s1"); got != want {
			t.Errorf("%s: AgentLeftoversPossible = %v, want %v", what, got, want)
		}
	}
	check("no lock file (no supervisor ever ran)", false)
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check("an empty lock file (the supervisor ended the agent's tree)", false)
	if err := os.Truncate(lock, 1); err != nil {
		t.Fatal(err)
	}
	check("a marked lock file (a supervisor was killed)", true)
	os.Remove(lock)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("x"), 0o600)
	if err := os.Symlink(target, lock); err != nil {
		t.Skip("no symbolic links here")
	}
	check("a symbolic link (never followed)", false)
}
