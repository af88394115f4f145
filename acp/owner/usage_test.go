package owner

import (
	"bytes"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// A usage report costs no record write of its own: its totals ride on the
// next one (the turn's end, a moment later), or are written usageFlushDelay
// after the report when the turn runs on; the log has every report at once.
func TestOwner_UsageTotalsReachTheRecordWithTheTurnsEndOrSoonAfterTheReport(t *testing.T) {
	r := newRig(t)
	id := r.create("")
	// A usage report in the middle of a turn that then runs 1.5 s more
	// (after the last chunk of "before the pause", as the demo agent streams it).
	r.rewrite = func(line []byte) []byte {
		if bytes.Contains(line, []byte(`"agent_message_chunk"`)) && bytes.Contains(line, []byte(`"text":"ause"`)) {
			mid := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + tokenIn(line) + `","update":{"sessionUpdate":"usage_update","used":7,"size":1000,"cost":{"amount":0.5,"currency":"USD"}}}}`
			return append(append(line, '\n'), mid...)
		}
		return line
	}
	done := r.runInBackground(r.job(id, "/say before the pause\n/sleep 1500\n/say after it"))
	start := time.Now()
	r.waitRecord(id, "the mid-turn usage in the record", func(s *state.Session) bool { return s.Usage != nil && s.Usage.Cost != nil })
	s := r.session(id)
	if s.CurrentTurn == "" {
		t.Fatalf("the usage totals reached the record only after the turn (%s): they must follow the report within %s", time.Since(start), usageFlushDelay)
	}
	if s.Usage.Cost.Amount != 0.5 || s.Usage.Used != 7 {
		t.Fatalf("mid-turn totals: cost %v, used %d; want 0.5 and 7", s.Usage.Cost.Amount, s.Usage.Used)
	}
	if err := <-done; err != nil {
		t.Fatalf("owner: %v", err)
	}
	// The demo agent's own report at the end of the turn (cost 0.001: a new
	// count, below the last) is in the record with the turn's end.
	end := r.session(id)
	var last *eventlog.Event
	for _, e := range r.events(id) {
		if e.Type == eventlog.EventUsage {
			e := e
			last = &e
		}
	}
	if last == nil || last.SessionCost == nil {
		t.Fatal("no usage event with the session's cost in the log")
	}
	if end.Usage == nil || end.Usage.Cost == nil || end.Usage.Cost.Amount != last.SessionCost.Amount {
		t.Fatalf("record's cost after the turn %+v, the log's last session cost %v", end.Usage, last.SessionCost.Amount)
	}
}

// tokenIn is the sessionId of a session/update line.
func tokenIn(line []byte) string {
	const key = `"sessionId":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return ""
	}
	rest := line[i+len(key):]
	return string(rest[:bytes.IndexByte(rest, '"')])
}

// Once the owner's end has settled the usage totals, a flush timer that
// fired meanwhile writes nothing: no record write follows the owner's end.
func TestOwner_AUsageFlushAfterTheOwnersEndWritesNothing(t *testing.T) {
	r := newRig(t)
	id := r.create("")
	s := r.session(id)
	o := &owner{job: r.job(id, ""), s: s}
	o.pendingUsage = &state.Session{Usage: &state.UsageTotals{Used: 9}}
	o.usageFlushOff = true // as settleUsage leaves it
	o.flushUsage()
	if got := r.session(id); got.Usage != nil {
		t.Fatalf("a flush after the owner's end wrote the record: usage %+v", got.Usage)
	}
	o.usageFlushOff = false // while the owner runs, the same flush writes the totals
	o.flushUsage()
	if got := r.session(id); got.Usage == nil || got.Usage.Used != 9 {
		t.Fatalf("the flush during the owner's run left usage %+v, want used 9", got.Usage)
	}
	if o.pendingUsage != nil {
		t.Fatal("the written totals are still pending")
	}
}
