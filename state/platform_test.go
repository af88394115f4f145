package state

import (
	"os"
	"runtime"
	"testing"
)

// skipOnWindows skips a test of a unix guarantee that Windows keeps
// another way, saying which.
func skipOnWindows(t *testing.T, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("not on Windows: " + why)
	}
}

// skipWithoutSymlinks skips a test that needs symbolic links where this
// Windows cannot make one at path: it needs Developer Mode or an
// administrator, and Wine reports success but makes none.
func skipWithoutSymlinks(t *testing.T, path string) {
	t.Helper()
	if runtime.GOOS != "windows" {
		return
	}
	defer os.Remove(path)
	if err := os.Symlink(os.Args[0], path); err != nil {
		t.Skipf("not on this Windows: it cannot make a symbolic link: %v", err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Skip("not on this Windows: os.Symlink reported success but made no link (Wine)")
	}
}
