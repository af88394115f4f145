// Package testlog writes synthetic kandev homes for tests and benchmarks:
// event logs in the log's line format and session records, fast and
// deterministic. It does not import kandev's own packages, so the tests of
// any of them (state's included) can use it; what it writes must therefore
// keep the format documented in docs/event-log.md by hand.
package testlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Event is one log line; fields left zero are left out, as kandev writes them.
type Event struct {
	Seq        int64  `json:"seq"`
	Timestamp  string `json:"timestamp"`
	Type       string `json:"type"`
	SessionID  string `json:"session_id"`
	TurnID     string `json:"turn_id,omitempty"`
	Role       string `json:"role,omitempty"`
	Content    string `json:"content,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolStatus string `json:"tool_status,omitempty"`
	Source     string `json:"source,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
}

// Stamp is the timestamp every generated event carries.
const Stamp = "2026-11-30T05:22:09.123456789Z"

// Shape makes the event with the given seq (1, 2, ...); Write fills in seq,
// timestamp and session id.
type Shape func(seq int64) Event

// Chunks is a log of streamed assistant chunks, a hundred to a turn.
func Chunks(seq int64) Event {
	return Event{Type: "agent_message", TurnID: fmt.Sprintf("t%d", seq/100+1), Role: "assistant",
		Content: fmt.Sprintf("chunk %d of a long streamed answer", seq)}
}

// toolResult is a tool result of typical size.
var toolResult = strings.Repeat("package state // ...\n", 10)

// Conversation is a log of whole turns: turn_started, the user's message,
// three streamed chunks, a tool call and its result, turn_ended.
func Conversation(seq int64) Event {
	turn := fmt.Sprint("t", seq/8+1)
	var e Event
	switch seq % 8 {
	case 0:
		e = Event{Type: "turn_started", Source: "user"}
	case 1:
		e = Event{Type: "user_message", Role: "user", Content: fmt.Sprint("Please fix failing test ", seq/8, " in state/log_test.go.")}
	case 2, 3, 4:
		e = Event{Type: "agent_message", Role: "assistant", Content: "Looking at the log reader now; the torn line handling needs a fix. "}
	case 5:
		e = Event{Type: "tool_call", ToolName: "Read state/log.go", ToolCallID: fmt.Sprint("call-", seq), ToolStatus: "pending"}
	case 6:
		e = Event{Type: "tool_result", ToolName: "Read state/log.go", ToolCallID: fmt.Sprint("call-", seq-1), ToolStatus: "completed", Content: toolResult}
	case 7:
		e = Event{Type: "turn_ended", StopReason: "end_turn"}
	}
	e.TurnID = turn
	return e
}

// WriteLog writes n events of shape for session id to path.
func WriteLog(tb testing.TB, path, id string, n int, shape Shape) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	for seq := int64(1); seq <= int64(n); seq++ {
		e := shape(seq)
		e.Seq, e.Timestamp, e.SessionID = seq, Stamp, id
		if err := enc.Encode(&e); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// RecordID is the id of the i-th generated session.
func RecordID(i int) string { return fmt.Sprintf("20260105-090000-%08x", i) }

// Home says what WriteHome writes for each session.
type Home struct {
	// State is the i-th session's state; nil: all WAITING_FOR_INPUT.
	State func(i int) string
	// LogEvents is the length of each session's log, in Chunks; 0: no log.
	LogEvents int
	// Locks writes the empty lock files an owner leaves.
	Locks bool
}

// WriteRecords writes n session records as kandev leaves them after a few
// turns of the demo agent, all waiting for input.
func WriteRecords(tb testing.TB, home string, n int) { WriteHome(tb, home, n, Home{}) }

// WriteHome writes n sessions into home's sessions folder as kandev leaves
// them after a few turns of the demo agent, the i-th active i seconds after
// the first. A RUNNING one has turn t5 current, cut off in the log. Records
// carry no format field (format 0): every kandev reads them.
func WriteHome(tb testing.TB, home string, n int, h Home) {
	tb.Helper()
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	caps := json.RawMessage(`{"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"resume":{}}},"agentInfo":{"name":"kandev-demo-agent","version":"0.1.0"},"protocolVersion":1}`)
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		id := RecordID(i)
		st := "WAITING_FOR_INPUT"
		if h.State != nil {
			st = h.State(i)
		}
		rec := map[string]any{
			"id": id, "task_id": id, "title": fmt.Sprintf("fix the flaky test %d", i), "workspace": "repo", "cwd": "/src/repo",
			"agent": "demo", "state": st, "task_state": taskState[st], "stop_reason": "end_turn",
			"created_at": base, "last_activity_at": base.Add(time.Duration(i) * time.Second),
			"resume_token": fmt.Sprintf("demo-%016x", i), "agent_command": []string{"{kandev}", "demo-agent"},
			"agent_launched": true, "capabilities": caps, "turns": 4,
		}
		if st == "RUNNING" {
			rec["current_turn"], rec["stop_reason"] = "t5", ""
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		write(tb, filepath.Join(dir, id+".json"), b)
		if h.LogEvents > 0 {
			WriteLog(tb, filepath.Join(dir, id+".jsonl"), id, h.LogEvents, func(seq int64) Event {
				if seq == 1 {
					return Event{Type: "turn_started", TurnID: "t5", Source: "user"}
				}
				return Event{Type: "agent_message", TurnID: "t5", Role: "assistant", Content: "a streamed chunk"}
			})
		}
		if h.Locks {
			write(tb, filepath.Join(dir, id+".owner.lock"), nil)
			write(tb, filepath.Join(dir, id+".record.lock"), nil)
		}
	}
}

var taskState = map[string]string{"CREATED": "TODO", "STARTING": "IN_PROGRESS", "RUNNING": "IN_PROGRESS",
	"WAITING_FOR_INPUT": "REVIEW", "COMPLETED": "COMPLETED", "FAILED": "FAILED", "CANCELLED": "CANCELLED"}

func write(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}
