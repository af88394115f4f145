package state

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/safefile"
)

func TestSessionFiles_SymlinksAreRefusedForReadingAndWriting(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "victim")
	skipWithoutSymlinks(t, filepath.Join(h.Dir, "probe"))
	const original = "{\"seq\":1,\"type\":\"state\"}\n"
	link := func(path string) {
		t.Helper()
		os.WriteFile(outside, []byte(original), 0o600)
		os.Remove(path)
		if err := os.Symlink(outside, path); err != nil {
			t.Fatal(err)
		}
	}
	attempts := []struct {
		name string
		path string
		do   func() error
	}{
		{"log append", h.LogPath("s1"), func() error { _, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{}); return err }},
		{"log read", h.LogPath("s1"), func() error { _, _, err := eventlog.ReadAll(h.LogPath("s1")); return err }},
		{"log read backward", h.LogPath("s1"), func() error { _, _, err := eventlog.LastEvent(h.LogPath("s1")); return err }},
		{"record read", h.RecordPath("s1"), func() error { _, err := h.LoadSession("s1"); return err }},
		{"inbox append", h.InboxPath("s1"), func() error { return h.Enqueue("s1", &Input{Kind: InputPrompt, Text: "x"}) }},
		{"inbox read", h.InboxPath("s1"), func() error { _, err := h.ReadInbox("s1", 0); return err }},
		{"lease read", h.LeasePath("s1"), func() error { _, err := h.ReadLease("s1"); return err }},
		{"owner lock taken", h.LockPath("s1"), func() error { _, err := h.AcquireOwner("s1"); return err }},
		{"owner lock probed", h.LockPath("s1"), func() error { _, err := h.OwnerAlive("s1"); return err }},
		{"record lock taken", h.RecordLockPath("s1"), func() error { _, err := h.LockRecord("s1"); return err }},
		{"owner.out opened", h.OwnerOutPath("s1"), func() error { _, err := h.OpenOwnerOut("s1"); return err }},
		{"prompt handoff read", h.PromptHandoffPath("s1"), func() error { _, _, err := h.readPromptHandoff("s1"); return err }},
		{"recap digest read", h.DigestPath("s1"), func() error { _, err := h.ReadDigest("s1"); return err }},
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			link(a.path)
			defer os.Remove(a.path)
			err := a.do()
			if !errors.Is(err, safefile.ErrSymlink) || !strings.Contains(err.Error(), a.path) {
				t.Fatalf("got %v, want a refusal naming %s", err, a.path)
			}
			if b, _ := os.ReadFile(outside); string(b) != original {
				t.Fatalf("the file outside the home changed: %q", b)
			}
		})
	}
}

// A dangling link is the dangerous one: following it would create its
// target, outside the home, with every probe of the session (even status).
func TestSessionFiles_DanglingLinksAreNeitherFollowedNorCreated(t *testing.T) {
	cases := []struct {
		file string
		do   func(h *Home) error
	}{
		{"s1.owner.lock", func(h *Home) error { _, err := h.OwnerAlive("s1"); return err }},
		{"s1.record.lock", func(h *Home) error { _, err := h.UpdateSession("s1", func(*Session) error { return nil }); return err }},
		{"s1.owner.out", func(h *Home) error { _, err := h.OpenOwnerOut("s1"); return err }},
		{"s1.prompt", func(h *Home) error { _, _, err := h.readPromptHandoff("s1"); return err }},
		{"s1.inbox.jsonl", func(h *Home) error { return h.Enqueue("s1", &Input{Kind: InputPrompt, Text: "x"}) }},
		{"s1.jsonl", func(h *Home) error { _, _, err := h.OpenLog("s1", eventlog.OpenLogOptions{}); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			h, err := OpenHome(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(h.sessionsDir(), tc.file)
			skipWithoutSymlinks(t, filepath.Join(h.Dir, "probe"))
			target := filepath.Join(t.TempDir(), tc.file)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			err = tc.do(h)
			if !errors.Is(err, safefile.ErrSymlink) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want a one-line refusal naming %s", err, path)
			}
			if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("its target outside the home was created")
			}
		})
	}
}

func TestLoadSession_RecordWhoseIDDisagreesWithItsFileNameIsAnError(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(h.RecordPath("s1"), []byte(`{"id":"../../escaped","state":"WAITING_FOR_INPUT"}`), 0o600)
	_, err = h.LoadSession("s1")
	if !errors.Is(err, ErrRecordID) || !strings.Contains(err.Error(), h.RecordPath("s1")) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v", err)
	}
	if _, err := h.UpdateSession("s1", func(*Session) error { return nil }); !errors.Is(err, ErrRecordID) {
		t.Fatalf("update used the record: %v", err)
	}
}

func TestDefaultHomeDir_WithoutHOMEIsAnError(t *testing.T) {
	home := "HOME" // the variable os.UserHomeDir reads
	if runtime.GOOS == "windows" {
		home = "USERPROFILE"
	}
	t.Setenv(home, "")
	dir, err := DefaultHomeDir()
	if err == nil || !strings.Contains(err.Error(), "KANDEV_HOME") {
		t.Fatalf("got %q, %v", dir, err)
	}
	t.Setenv(home, filepath.FromSlash("/home/someone"))
	if dir, err := DefaultHomeDir(); err != nil || dir != filepath.FromSlash("/home/someone/.kandev") {
		t.Fatalf("got %q, %v", dir, err)
	}
}

func TestLeftovers_StaleTempFilesAndLogsWithoutARecord(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	h.CreateSession(&Session{ID: "kept"})
	os.WriteFile(h.LogPath("kept"), []byte("{\"seq\":1}\n"), 0o600)
	log := []byte("{\"seq\":1,\"session_id\":\"half\"}\n")
	os.WriteFile(h.LogPath("half"), log, 0o600) // an import killed before its record
	stale := filepath.Join(h.sessionsDir(), ".half.json.tmp123")
	fresh := filepath.Join(h.sessionsDir(), ".kept.json.tmp456")
	os.WriteFile(stale, nil, 0o600)
	os.WriteFile(fresh, nil, 0o600)
	os.Chtimes(stale, now.Add(-time.Hour), now.Add(-time.Hour))
	left, err := h.Leftovers(now)
	if err != nil {
		t.Fatal(err)
	}
	want := []Leftover{{Path: stale, Kind: "temp"}, {Path: h.LogPath("half"), Kind: "log"}}
	if len(left) != 2 || left[0] != want[0] || left[1] != want[1] {
		t.Fatalf("got %+v, want %+v", left, want)
	}
	if !h.IsImportLeftover("half", log) || h.IsImportLeftover("half", []byte("other\n")) || h.IsImportLeftover("kept", []byte("{\"seq\":1}\n")) {
		t.Fatal("an import may replace only its own leftover log, never a session's log")
	}
}
