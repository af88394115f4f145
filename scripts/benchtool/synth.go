//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// demoCaps is what the demo agent answers to initialize, as kandev stores it.
const demoCaps = `{"agentCapabilities":{"auth":{},"loadSession":true,"mcpCapabilities":{},"promptCapabilities":{},"sessionCapabilities":{"resume":{}}},"agentInfo":{"name":"kandev-demo-agent","version":"0.1.0"},"authMethods":[],"protocolVersion":1}`

var base = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// record is a realistic session record: what kandev writes for a demo session
// that ran a few turns.
func record(id, cwd string, i int, st string) *state.Session {
	created := base.Add(time.Duration(i) * time.Minute)
	s := &state.Session{
		ID: id, TaskID: id, Title: fmt.Sprintf("fix the flaky test number %d in the parser package", i),
		Workspace: filepath.Base(cwd), Cwd: cwd, Agent: "demo", State: st, TaskState: state.TaskStateFor(st),
		StopReason: eventlog.StopEndTurn, CreatedAt: created, LastActivityAt: created.Add(7 * time.Minute),
		ResumeToken: fmt.Sprintf("demo-%016x", i), AgentCommand: []string{"{kandev}", "demo-agent"},
		AgentLaunched: true, Capabilities: json.RawMessage(demoCaps), Turns: 4,
	}
	if st == state.StateRunning {
		s.CurrentTurn, s.StopReason = fmt.Sprintf("t%d", s.Turns), "" // writeLog's open turn
	}
	return s
}

// writeRecord writes the record as kandev does (indented JSON), without the
// fsync of an atomic replace: a synthetic home is rebuilt, not recovered.
func writeRecord(h *state.Home, s *state.Session) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(h.RecordPath(s.ID), append(b, '\n'), 0o600)
}

// cmdSessions writes n sessions: 60% waiting for input, 10% interrupted
// mid-turn (needs resume), 30% completed, each with a log of -events events
// (a short one by default) and the lock files a session that ran has; every
// 50th one mentions -word once.
func cmdSessions(args []string) error {
	fs := flag.NewFlagSet("sessions", flag.ExitOnError)
	home := fs.String("home", "", "kandev home")
	n := fs.Int("n", 1000, "number of sessions")
	cwd := fs.String("cwd", "", "the sessions' working directory")
	events := fs.Int("events", 40, "events in each session's log")
	word := fs.String("word", "", "a word that every 50th session mentions once, in a prompt (for kandev search)")
	fs.Parse(args)
	if *home == "" || *cwd == "" {
		return errors.New("sessions: -home and -cwd are required")
	}
	h, err := state.OpenHome(*home)
	if err != nil {
		return err
	}
	for i := 0; i < *n; i++ {
		st := state.StateWaitingForInput
		switch i % 10 {
		case 0:
			st = state.StateRunning
		case 1, 2, 3:
			st = state.StateCompleted
		}
		id := fmt.Sprintf("%s-%08x", base.Add(time.Duration(i)*time.Minute).Format("20060102-150405"), i)
		s := record(id, *cwd, i, st)
		s.Turns = (*events + 10) / 11 // the turns writeLog writes (11 events each)
		if st == state.StateRunning {
			s.CurrentTurn = fmt.Sprintf("t%d", s.Turns)
		}
		if err := writeRecord(h, s); err != nil {
			return err
		}
		planted := ""
		if i%50 == 0 {
			planted = *word
		}
		if err := writeLog(h.LogPath(id), id, *events, st == state.StateRunning, planted); err != nil {
			return err
		}
		for _, p := range []string{h.LockPath(id), h.RecordLockPath(id)} {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// cmdLog writes one session whose log has the given number of events.
func cmdLog(args []string) error {
	fs := flag.NewFlagSet("log", flag.ExitOnError)
	home := fs.String("home", "", "kandev home")
	id := fs.String("id", "", "session id")
	n := fs.Int("events", 1000, "number of events")
	cwd := fs.String("cwd", "", "the session's working directory")
	fs.Parse(args)
	if *home == "" || *id == "" || *cwd == "" {
		return errors.New("log: -home, -id and -cwd are required")
	}
	h, err := state.OpenHome(*home)
	if err != nil {
		return err
	}
	s := record(*id, *cwd, 1, state.StateWaitingForInput)
	s.Turns = *n / 10
	if err := writeRecord(h, s); err != nil {
		return err
	}
	return writeLog(h.LogPath(*id), *id, *n, false, "")
}

// writeLog writes n events in the docs/event-log.md format: turns of
// turn_started, user_message, state, three agent_message chunks, a thought,
// a tool call and its result, turn_ended and state; a marker every 100
// turns. With open set, the last turn has no end (an interrupted turn). A
// word, when given, is in the second turn's prompt.
func writeLog(path, id string, n int, open bool, word string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	seq := int64(0)
	ts := base
	emit := func(e eventlog.Event) {
		if int(seq) >= n {
			return
		}
		seq++
		ts = ts.Add(37 * time.Millisecond)
		e.Seq, e.Timestamp, e.SessionID = seq, eventlog.FormatTime(ts), id
		_ = enc.Encode(&e)
	}
	result := strings.Repeat("func (l *EventLog) Append(events ...*Event) error {\n", 4)
	for t := 1; int(seq) < n; t++ {
		turn := fmt.Sprintf("t%d", t)
		last := open && int(seq)+11 >= n
		emit(eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: turn, Source: eventlog.SourceUser})
		prompt := fmt.Sprintf("Please fix the failing test %d in state/log_test.go and explain the change.", t)
		if t == 2 && word != "" {
			prompt += " The " + word + " is involved."
		}
		emit(eventlog.Event{Type: eventlog.EventUserMessage, TurnID: turn, Role: "user", Content: prompt})
		emit(eventlog.Event{Type: eventlog.EventState, TurnID: turn, State: state.StateRunning})
		emit(eventlog.Event{Type: eventlog.EventAgentThought, TurnID: turn, Role: "assistant", Content: "The torn-line handling looks wrong; reading the reader first."})
		call := fmt.Sprintf("call-%d", t)
		emit(eventlog.Event{Type: eventlog.EventToolCall, TurnID: turn, ToolName: "Read state/log.go", ToolCallID: call, ToolStatus: "pending", ToolKind: "read", Input: json.RawMessage(`{"path":"state/log.go"}`)})
		if last {
			break
		}
		emit(eventlog.Event{Type: eventlog.EventToolResult, TurnID: turn, ToolName: "Read state/log.go", ToolCallID: call, ToolStatus: "completed", ToolKind: "read", Content: result})
		for c := 0; c < 3; c++ {
			emit(eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: turn, Role: "assistant", Content: fmt.Sprintf("Chunk %d of the answer: the reader now skips a torn last line and reports it. ", c)})
		}
		emit(eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: eventlog.StopEndTurn})
		emit(eventlog.Event{Type: eventlog.EventState, TurnID: turn, State: state.StateWaitingForInput})
		if t%100 == 0 {
			emit(eventlog.Event{Type: eventlog.EventMarker, Kind: "session_recovered", Severity: "info", Summary: "Stopped agent process 4242 left running by a dead owner."})
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
