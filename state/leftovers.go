package state

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/internal/safefile"
)

// StaleTempAge is how old a temp file of an atomic write must be before it
// is taken for the leftover of a killed process: a live write renames its
// temp file within moments.
const StaleTempAge = 10 * time.Minute

// Leftover is a file in the sessions directory that no session owns: the
// trace of a process killed between the steps of a write.
type Leftover struct {
	Path string `json:"path"`
	// Kind is "temp" (an atomic write that never reached its rename) or
	// "log" (an event log with no record: an import killed before its last
	// step, or a record moved away by hand).
	Kind string `json:"kind"`
}

// Leftovers lists the temp files older than StaleTempAge and the event logs
// that have no record.
func (h *Home) Leftovers(now time.Time) ([]Leftover, error) {
	entries, err := os.ReadDir(h.sessionsDir())
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(h.sessionsDir(), name)
		if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp") {
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) >= StaleTempAge {
				out = append(out, Leftover{Path: path, Kind: "temp"})
			}
			continue
		}
		id, ok := strings.CutSuffix(name, ".jsonl")
		if !ok || ValidateID(id) != nil {
			continue
		}
		if _, err := os.Lstat(h.RecordPath(id)); errors.Is(err, os.ErrNotExist) {
			out = append(out, Leftover{Path: path, Kind: "log"})
		}
	}
	return out, nil
}

// IsImportLeftover reports whether session id has an event log but no
// record, and that log holds exactly log: what an import of the same bundle
// leaves when it is killed after writing the log and before the record, so
// importing again may replace it. Any other log stays untouched.
func (h *Home) IsImportLeftover(id string, log []byte) bool {
	if _, err := os.Lstat(h.RecordPath(id)); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	have, err := safefile.ReadFile(h.LogPath(id))
	return err == nil && bytes.Equal(have, log)
}
