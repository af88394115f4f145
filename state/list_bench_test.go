package state

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"
)

// writeBenchRecords writes n records as kandev leaves them after a few turns.
func writeBenchRecords(tb testing.TB, h *Home, n int) {
	tb.Helper()
	caps := json.RawMessage(`{"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"resume":{}}},"agentInfo":{"name":"kandev-demo-agent","version":"0.1.0"},"protocolVersion":1}`)
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("20260105-090000-%08x", i)
		s := &Session{ID: id, TaskID: id, Title: fmt.Sprintf("fix the flaky test %d", i), Workspace: "repo", Cwd: "/src/repo",
			Agent: "demo", State: StateWaitingForInput, CreatedAt: base, LastActivityAt: base.Add(time.Duration(i) * time.Second),
			ResumeToken: fmt.Sprintf("demo-%016x", i), AgentCommand: []string{"{kandev}", "demo-agent"}, AgentLaunched: true, Capabilities: caps, Turns: 4}
		s.TaskState = TaskStateFor(s.State)
		if err := os.WriteFile(h.RecordPath(id), mustJSON(s), filePerm); err != nil {
			tb.Fatal(err)
		}
	}
}

func benchListSessions(b *testing.B, n int) {
	h, err := OpenHome(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	writeBenchRecords(b, h, n)
	b.ReportAllocs()
	for b.Loop() {
		ss, err := h.ListSessions()
		if err != nil || len(ss) != n {
			b.Fatalf("%d sessions, %v", len(ss), err)
		}
	}
}

func BenchmarkListSessions_1000(b *testing.B)  { benchListSessions(b, 1_000) }
func BenchmarkListSessions_10000(b *testing.B) { benchListSessions(b, 10_000) }

// BenchmarkVerdict is the pure part of status and of every list row: the
// verdict and the badge of one record.
func BenchmarkVerdict(b *testing.B) {
	s := &Session{ID: "x", State: StateRunning, CurrentTurn: "t3", ResumeToken: "tok", AgentLaunched: true}
	obs := Observation{Now: time.Now()}
	b.ReportAllocs()
	for b.Loop() {
		if v := Decide(s, obs); !v.NeedsResume || Badge(s, false) != BadgeNeedsResume {
			b.Fatal(v)
		}
	}
}

// BenchmarkOwnerAlive is the lock probe list makes for every live session.
func BenchmarkOwnerAlive(b *testing.B) {
	h, err := OpenHome(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if alive, err := h.OwnerAlive("bench"); alive || err != nil {
			b.Fatal(alive, err)
		}
	}
}
