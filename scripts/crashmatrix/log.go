//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// event is the part of a log line the checks read. It is decoded
// here, independently of kandev's own state package.
type event struct {
	Seq        int64  `json:"seq"`
	Timestamp  string `json:"timestamp"`
	Type       string `json:"type"`
	SessionID  string `json:"session_id"`
	TurnID     string `json:"turn_id"`
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolName   string `json:"tool_name"`
	ToolCallID string `json:"tool_call_id"`
	ToolStatus string `json:"tool_status"`
	ChildID    string `json:"child_id"`
	Source     string `json:"source"`
	StopReason string `json:"stop_reason"`
	State      string `json:"state"`
	Kind       string `json:"kind"`
	Severity   string `json:"severity"`
	Summary    string `json:"summary"`
	PID        int    `json:"pid"`
}

type logLine struct {
	raw []byte // without the newline
	ev  event
}

// sessionLog is a parsed sessions/<id>.jsonl.
type sessionLog struct {
	lines []logLine
	torn  []byte   // an unterminated last line, if any
	probs []string // corrupt lines, seq gaps, foreign session ids
}

func (l *sessionLog) events() []event {
	out := make([]event, len(l.lines))
	for i, x := range l.lines {
		out[i] = x.ev
	}
	return out
}

// readLog parses the log strictly: every complete line must be a JSON object
// with seq = its position (1, 2, 3, ...), the session's id, a type and an
// RFC 3339 timestamp. An unterminated last line is returned as torn (the
// caller decides whether that is allowed at this point).
func readLog(path, sessionID string) (*sessionLog, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &sessionLog{}, nil
	}
	if err != nil {
		return nil, err
	}
	l := &sessionLog{}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			l.torn = append([]byte(nil), data...)
			break
		}
		raw := append([]byte(nil), data[:i]...)
		data = data[i+1:]
		n := len(l.lines) + 1
		var e event
		if err := json.Unmarshal(raw, &e); err != nil {
			l.probs = append(l.probs, fmt.Sprintf("line %d is not JSON (%v): %.80q", n, err, raw))
			// Keep its place so later seq checks still line up.
			l.lines = append(l.lines, logLine{raw: raw, ev: event{Seq: int64(n)}})
			continue
		}
		if e.Seq != int64(n) {
			l.probs = append(l.probs, fmt.Sprintf("line %d has seq %d (gap or duplicate)", n, e.Seq))
		}
		if e.Type == "" {
			l.probs = append(l.probs, fmt.Sprintf("line %d (seq %d) has no type", n, e.Seq))
		}
		if e.SessionID != sessionID {
			l.probs = append(l.probs, fmt.Sprintf("line %d (seq %d) has session_id %q", n, e.Seq, e.SessionID))
		}
		if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil {
			l.probs = append(l.probs, fmt.Sprintf("line %d (seq %d) has timestamp %q", n, e.Seq, e.Timestamp))
		}
		l.lines = append(l.lines, logLine{raw: raw, ev: e})
	}
	return l, nil
}

// turnInfo summarises one turn of a log.
type turnInfo struct {
	id          string
	source      string
	startIdx    int // index of its turn_started in the log
	ended       bool
	stopReason  string
	agentEvents int             // events the agent originated in it (accepted = > 0)
	sent        bool            // its prompt_sent is in the log: the prompt reached the agent
	calls       []string        // tool_call ids in first-seen order
	results     map[string]bool // tool_call id -> has a tool_result
	unknown     map[string]bool // tool_call id -> has a tool_result with tool_status unknown
	permPending map[string]bool // tool_call id -> permission_requested without permission_resolved
	userText    string
	children    map[string]string // child id -> its recorded end ("" while running)
}

func (t *turnInfo) openCalls() []string {
	var out []string
	for _, c := range t.calls {
		if !t.results[c] {
			out = append(out, c)
		}
	}
	return out
}

// unresolvedCalls are the tool calls with no result or only an
// unknown-outcome one: those a signal left open.
func (t *turnInfo) unresolvedCalls() []string {
	var out []string
	for _, c := range t.calls {
		if !t.results[c] || t.unknown[c] {
			out = append(out, c)
		}
	}
	return out
}

func (t *turnInfo) pendingPermission() bool {
	for _, v := range t.permPending {
		if v {
			return true
		}
	}
	return false
}

// turns returns the turns of evs in order.
func turns(evs []event) []*turnInfo {
	var out []*turnInfo
	by := map[string]*turnInfo{}
	for i, e := range evs {
		if e.Type == "turn_started" {
			t := &turnInfo{id: e.TurnID, source: e.Source, startIdx: i, results: map[string]bool{},
				unknown: map[string]bool{}, permPending: map[string]bool{}, children: map[string]string{}}
			out = append(out, t)
			by[e.TurnID] = t
			continue
		}
		t := by[e.TurnID]
		if t == nil {
			continue
		}
		switch e.Type {
		case "turn_ended":
			t.ended, t.stopReason = true, e.StopReason
		case "prompt_sent":
			t.sent = true
		case "user_message":
			if t.userText == "" {
				t.userText = e.Content
			}
		case "agent_message", "agent_thought", "plan", "agent_update":
			t.agentEvents++
		case "tool_call":
			t.agentEvents++
			if _, seen := t.results[e.ToolCallID]; !seen {
				t.calls = append(t.calls, e.ToolCallID)
				t.results[e.ToolCallID] = false
			}
		case "tool_result":
			if e.ToolStatus == "unknown" {
				t.unknown[e.ToolCallID] = true
			} else {
				t.agentEvents++
			}
			t.results[e.ToolCallID] = true
		case "child_started", "child_message", "child_thought", "child_tool_call", "child_tool_result", "child_update":
			t.agentEvents++ // a child is the agent's answer too
			if _, seen := t.children[e.ChildID]; !seen {
				t.children[e.ChildID] = ""
			}
		case "child_ended":
			t.children[e.ChildID] = e.State
		case "permission_requested":
			t.permPending[e.ToolCallID] = true
		case "permission_resolved":
			t.permPending[e.ToolCallID] = false
		}
	}
	return out
}
