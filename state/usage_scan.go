package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// UsageRecord is what usage reports need of a session record.
type UsageRecord struct {
	ID        string
	Agent     string
	Workspace string
	Usage     *UsageTotals // nil when the session reported none
}

// UsageRecords reads the usage totals of the records of ids (every record
// when ids is nil), in parallel, decoding only the fields it needs. A record
// that is gone, unreadable or of a newer format is left out and counted in
// skipped.
func (h *Home) UsageRecords(ids []string) (recs []UsageRecord, skipped int, err error) {
	if ids == nil {
		if ids, err = h.listRecordIDs(); err != nil {
			return nil, 0, err
		}
	}
	out := make([]UsageRecord, len(ids))
	ok := make([]bool, len(ids))
	ForEach(len(ids), func(i int) {
		b, err := readSessionFile(h.RecordPath(ids[i]))
		if err != nil {
			return
		}
		f := gjson.GetManyBytes(b, "id", "format", "agent", "workspace", "usage")
		if f[0].String() != ids[i] || f[1].Int() > Format {
			return
		}
		r := UsageRecord{ID: ids[i], Agent: f[2].String(), Workspace: f[3].String()}
		if f[4].IsObject() {
			r.Usage = &UsageTotals{}
			if json.Unmarshal([]byte(f[4].Raw), r.Usage) != nil {
				return
			}
		}
		out[i], ok[i] = r, true
	})
	for i := range out {
		if ok[i] {
			recs = append(recs, out[i])
		} else {
			skipped++
		}
	}
	return recs, skipped, nil
}

// listRecordIDs names the session records in the home, unsorted.
func (h *Home) listRecordIDs() ([]string, error) {
	d, err := os.Open(h.sessionsDir())
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, name := range names {
		if id, ok := strings.CutSuffix(name, ".json"); ok && ValidateID(id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// UsageEvent is what usage reports need of one usage event.
type UsageEvent struct {
	Time        time.Time
	Turn        string
	SessionCost *Cost   // the session's total after the event, when it had a cost
	Tokens      *Tokens // the turn's token counts, when given
}

// usageLine is how every usage event is written: lines without it are not decoded.
var usageLine = []byte(`"type":"usage"`)

// ScanUsage calls fn with each usage event of session id's log, in order.
// A log last written before since holds none of interest and is not read.
func (h *Home) ScanUsage(id string, since time.Time, fn func(UsageEvent)) error {
	path := h.LogPath(id)
	if !since.IsZero() {
		st, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) || err == nil && st.ModTime().Before(since) {
			return nil
		}
	}
	_, err := scanLines(path, func(line []byte) bool {
		if !bytes.Contains(line, usageLine) {
			return true
		}
		f := gjson.GetManyBytes(line, "type", "timestamp", "turn_id", "session_cost", "tokens")
		if f[0].String() != EventUsage {
			return true
		}
		t, _ := time.Parse(time.RFC3339Nano, f[1].String())
		ev := UsageEvent{Time: t, Turn: f[2].String()}
		if f[3].IsObject() {
			ev.SessionCost = &Cost{Amount: f[3].Get("amount").Float(), Currency: f[3].Get("currency").String()}
		}
		if f[4].IsObject() {
			ev.Tokens = &Tokens{}
			if json.Unmarshal([]byte(f[4].Raw), ev.Tokens) != nil {
				ev.Tokens = nil
			}
		}
		fn(ev)
		return true
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
