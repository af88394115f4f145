package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

// benchHome writes n session records the way kandev leaves them after a few
// turns (60% waiting for input, 10% interrupted mid-turn, 30% completed),
// each with a short log and its lock files.
func benchHome(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	h, err := state.OpenHome(dir)
	if err != nil {
		b.Fatal(err)
	}
	caps := json.RawMessage(`{"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"resume":{}}},"agentInfo":{"name":"kandev-demo-agent","version":"0.1.0"},"protocolVersion":1}`)
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("20260105-090000-%08x", i)
		st := state.StateWaitingForInput
		switch i % 10 {
		case 0:
			st = state.StateRunning
		case 1, 2, 3:
			st = state.StateCompleted
		}
		s := &state.Session{ID: id, TaskID: id, Title: fmt.Sprintf("fix the flaky test %d", i), Workspace: "repo", Cwd: "/src/repo",
			Agent: "demo", State: st, TaskState: state.TaskStateFor(st), CreatedAt: base, LastActivityAt: base.Add(time.Duration(i) * time.Second),
			ResumeToken: fmt.Sprintf("demo-%016x", i), AgentCommand: []string{"{kandev}", "demo-agent"}, AgentLaunched: true, Capabilities: caps, Turns: 4}
		var log strings.Builder
		for seq := 1; seq <= 8; seq++ {
			typ := state.EventAgentMessage
			if seq == 1 {
				typ = state.EventTurnStarted
			}
			e, _ := json.Marshal(state.Event{Seq: int64(seq), Timestamp: state.FormatTime(base), Type: typ, SessionID: id, TurnID: "t5", Content: "a streamed chunk"})
			log.Write(append(e, '\n'))
		}
		if st == state.StateRunning {
			s.CurrentTurn = "t5"
		}
		rec, _ := json.MarshalIndent(s, "", "  ")
		for path, data := range map[string][]byte{h.RecordPath(id): rec, h.LogPath(id): []byte(log.String()), h.LockPath(id): nil, h.RecordLockPath(id): nil} {
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	return dir
}

func benchList(b *testing.B, n int, args ...string) {
	home := benchHome(b, n)
	args = append([]string{"--home", home}, args...)
	b.ReportAllocs()
	for b.Loop() {
		if code := Run(args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

func BenchmarkListResumable_1000Sessions(b *testing.B)  { benchList(b, 1_000, "list", "--resumable") }
func BenchmarkListResumable_10000Sessions(b *testing.B) { benchList(b, 10_000, "list", "--resumable") }
func BenchmarkListJSON_10000Sessions(b *testing.B)      { benchList(b, 10_000, "--json", "list") }
func BenchmarkStatusLatest_10000Sessions(b *testing.B) {
	benchList(b, 10_000, "status", "--latest")
}
