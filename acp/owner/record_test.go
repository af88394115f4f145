package owner

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestStorageError_NamesTheCauseAndIsErrStorage(t *testing.T) {
	err := error(&StorageError{What: "the log of session s1", SessionID: "s1", Err: &os.PathError{Op: "write", Path: "/h/s1.jsonl", Err: errors.New("no space left on device")}})
	if !errors.Is(err, ErrStorage) || strings.Count(err.Error(), "\n") != 0 ||
		!strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "kandev repair s1") {
		t.Fatalf("%v", err)
	}
}
