package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// usageHome writes n sessions as kandev leaves them after four demo turns:
// a record with its usage totals and a log of 40 events, four of them usage
// events, the oldest a week back.
func usageHome(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	h, err := state.OpenHome(dir)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now().UTC()
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("20260105-090000-%08x", i)
		agent := []string{"demo", "claude", "codex"}[i%3]
		s := &state.Session{ID: id, TaskID: id, Title: fmt.Sprintf("fix the flaky test %d", i), Workspace: "repo", Cwd: "/src/repo",
			Agent: agent, State: state.StateWaitingForInput, TaskState: state.TaskStateFor(state.StateWaitingForInput),
			CreatedAt: now, LastActivityAt: now, ResumeToken: fmt.Sprintf("demo-%016x", i), AgentLaunched: true, Turns: 4}
		var log strings.Builder
		seq := int64(0)
		for turn := 1; turn <= 4; turn++ {
			at := now.Add(time.Duration(turn-4) * 48 * time.Hour)
			for k := 0; k < 9; k++ {
				seq++
				e, _ := json.Marshal(eventlog.Event{Seq: seq, Timestamp: eventlog.FormatTime(at), Type: eventlog.EventAgentMessage, SessionID: id, TurnID: fmt.Sprintf("t%d", turn), Content: "a streamed chunk"})
				log.Write(append(e, '\n'))
			}
			seq++
			used, size := int64(100*turn), int64(100000)
			e := eventlog.Event{Seq: seq, Timestamp: eventlog.FormatTime(at), Type: eventlog.EventUsage, SessionID: id, TurnID: fmt.Sprintf("t%d", turn),
				Used: &used, Size: &size, Cost: &eventlog.Cost{Amount: float64(turn) / 1000, Currency: "USD"}}
			s.AccountUsage(&e, s.ResumeToken)
			b, _ := json.Marshal(e)
			log.Write(append(b, '\n'))
		}
		rec, _ := json.MarshalIndent(s, "", "  ")
		for path, data := range map[string][]byte{h.RecordPath(id): rec, h.LogPath(id): []byte(log.String())} {
			if err := os.WriteFile(path, data, 0o600); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir
}

func benchUsage(b *testing.B, args ...string) {
	home := usageHome(b, 10_000)
	args = append([]string{"--home", home, "--json", "usage"}, args...)
	b.ReportAllocs()
	for b.Loop() {
		if code := Run(args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

func BenchmarkUsageAll_10000Sessions(b *testing.B)        { benchUsage(b, "--all") }
func BenchmarkUsageAllByAgent_10000Sessions(b *testing.B) { benchUsage(b, "--all", "--by", "agent") }
func BenchmarkUsageAllByDay_10000Sessions(b *testing.B)   { benchUsage(b, "--all", "--by", "day") }
func BenchmarkUsageAllSince_10000Sessions(b *testing.B)   { benchUsage(b, "--all", "--since", "3d") }

// TestUsageBenchHome_SumsWhatItWrote keeps the generator honest: the fast
// path (records) and the log path (events) agree on its totals.
func TestUsageBenchHome_SumsWhatItWrote(t *testing.T) {
	home := usageHome(t, 30)
	for _, args := range [][]string{{"--all"}, {"--all", "--by", "day"}} {
		var out strings.Builder
		if code := Run(append([]string{"--home", home, "--json", "usage"}, args...), strings.NewReader(""), &out, io.Discard); code != 0 {
			t.Fatalf("usage %v: exit %d", args, code)
		}
		var r struct{ Usage struct{ Total usageRow } }
		if err := json.Unmarshal([]byte(out.String()), &r); err != nil || r.Usage.Total.Cost == nil || r.Usage.Total.Cost.String() != "0.12 USD" || r.Usage.Total.TurnsWithUsage != 120 {
			t.Fatalf("usage %v: %v %s", args, err, out.String())
		}
	}
}
