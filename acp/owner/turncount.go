package owner

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// catchUpTurns makes s count every turn its log started: a record write
// that failed after a turn_started was on disk (a full disk) left the
// count behind, and the next turn took that turn's id again (t1 t2 t3 t3).
// Only the record in memory changes; the next turn's start writes it.
func catchUpTurns(h *state.Home, s *state.Session) {
	if n := newestTurnNumber(h.LogPath(s.ID)); n > s.Turns {
		s.Turns = n
	}
}

// newestTurnNumber is the number of the newest turn_started in the log at
// path (t7: 7), 0 when none; read from the end of the log.
func newestTurnNumber(path string) int {
	n := 0
	_, _ = eventlog.ScanBackward(path, func(_ int64, line []byte) bool {
		if gjson.GetBytes(line, "type").String() != eventlog.EventTurnStarted {
			return true
		}
		k, err := strconv.Atoi(strings.TrimPrefix(gjson.GetBytes(line, "turn_id").String(), "t"))
		if err != nil {
			return true
		}
		n = k
		return false
	})
	return n
}
