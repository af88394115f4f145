package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/safefile"
)

// A reader of a record (another kandev following the session) has it open
// for a moment when the owner replaces it: the replace waits for the
// reader instead of failing the owner's write ("Access is denied"), which
// ended a warm prompt's turn with error under Wine, where a file that any
// handle holds open cannot be replaced.
func TestWriteFileAtomic_ReplacesAFileAReaderHasOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := safefile.WriteFileAtomic(path, []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	r, err := safefile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		r.Close()
	}()
	if err := safefile.WriteFileAtomic(path, []byte(`{"v":2}`)); err != nil {
		t.Fatalf("replacing a record a reader had open for 100 ms failed: %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != `{"v":2}` {
		t.Fatalf("after the replace the file holds %q, %v", b, err)
	}
}
