package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/kandev/kandev/internal/parallel"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/safefile"
	"github.com/tidwall/gjson"
)

// UsageRecord is what usage reports need of a session record.
type UsageRecord struct {
	ID        string
	Agent     string
	Workspace string
	Usage     *UsageTotals // nil when the session reported none
	// RateLimit is the agent's usage window as last reported (nil: never).
	RateLimit *RateWindow
}

// UsageRecords reads the usage totals of the records of ids (every record
// when ids is nil), in parallel, decoding only the fields it needs. A record
// that is gone, unreadable or of a newer format is left out and counted in
// skipped.
func (h *Home) UsageRecords(ids []string) (recs []UsageRecord, skipped int, err error) {
	type read struct {
		rec UsageRecord
		ok  bool
	}
	usageOf := func(id string, b []byte, err error) (read, bool) {
		if err != nil {
			return read{}, true
		}
		f := gjson.GetManyBytes(b, "id", "format", "agent", "workspace", "usage", "rate_limit")
		if f[0].String() != id || f[1].Int() > Format {
			return read{}, true
		}
		r := UsageRecord{ID: id, Agent: f[2].String(), Workspace: f[3].String()}
		if f[4].IsObject() {
			r.Usage = usageTotalsOf(f[4])
		}
		if f[5].IsObject() {
			var w RateWindow
			if json.Unmarshal([]byte(f[5].Raw), &w) == nil {
				r.RateLimit = &w
			}
		}
		return read{r, true}, true
	}
	var all []read
	if ids == nil {
		if all, _, err = scanRecords(h, usageOf); err != nil {
			return nil, 0, err
		}
	} else {
		all = make([]read, len(ids))
		parallel.ForEach(len(ids), func(i int) {
			buf := recordBufs.Get().(*[]byte)
			defer recordBufs.Put(buf)
			b, err := safefile.ReadRecordFile(safefile.AtCWD, "", h.RecordPath(ids[i]), (*buf)[:0])
			*buf = b
			all[i], _ = usageOf(ids[i], b, err)
		})
	}
	for _, r := range all {
		if r.ok {
			recs = append(recs, r.rec)
		} else {
			skipped++
		}
	}
	return recs, skipped, nil
}

// usageTotalsOf reads a record's usage object field by field.
func usageTotalsOf(u gjson.Result) *UsageTotals {
	t := &UsageTotals{Used: u.Get("used").Int(), Size: u.Get("size").Int(), TurnsWithUsage: int(u.Get("turns_with_usage").Int())}
	if c := u.Get("cost"); c.IsObject() {
		t.Cost = &eventlog.Cost{Amount: c.Get("amount").Float(), Currency: c.Get("currency").String()}
	}
	if k := u.Get("tokens"); k.IsObject() {
		t.Tokens = tokensOf(k)
	}
	return t
}

func tokensOf(k gjson.Result) *eventlog.Tokens {
	f := k.Get("@this").Map()
	return &eventlog.Tokens{Input: f["input"].Int(), Output: f["output"].Int(), Total: f["total"].Int(),
		CachedRead: f["cached_read"].Int(), CachedWrite: f["cached_write"].Int(), Thought: f["thought"].Int()}
}

// UsageEvent is what usage reports need of one usage event.
type UsageEvent struct {
	Time        time.Time
	Turn        string
	SessionCost *eventlog.Cost   // the session's total after the event, when it had a cost
	Tokens      *eventlog.Tokens // the turn's token counts, when given
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
	_, err := eventlog.ScanLines(path, func(line []byte) bool {
		if !bytes.Contains(line, usageLine) {
			return true
		}
		f := gjson.GetManyBytes(line, "type", "timestamp", "turn_id", "session_cost", "tokens")
		if f[0].String() != eventlog.EventUsage {
			return true
		}
		t, _ := time.Parse(time.RFC3339Nano, f[1].String())
		ev := UsageEvent{Time: t, Turn: f[2].String()}
		if f[3].IsObject() {
			ev.SessionCost = &eventlog.Cost{Amount: f[3].Get("amount").Float(), Currency: f[3].Get("currency").String()}
		}
		if f[4].IsObject() {
			ev.Tokens = tokensOf(f[4])
		}
		fn(ev)
		return true
	})
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
