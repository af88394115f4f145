package demoagent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// Entry roles.
const (
	roleUser       = "user"
	roleAgent      = "agent"
	roleThought    = "thought"
	roleToolCall   = "tool_call"
	roleToolResult = "tool_result"
)

// session is one conversation held in memory.
type session struct {
	turn sync.Mutex // one prompt or replay at a time, so file has a single writer
	file sessionFile
	// mcp are the MCP servers the client gave with the latest session/new,
	// load or resume; never saved (their env and headers may hold secrets).
	mcp []acp.McpServer
	// alwaysAllow: the client answered a write's permission request with
	// allow_always; later writes are not asked about (kept in memory only).
	alwaysAllow bool
	steer       steerBox    // messages steered into the running turn (steer.go)
	running     runningTurn // the running turn's cancel (close.go)
}

// sessionFile is the content of <Dir>/<id>.json.
type sessionFile struct {
	ID       string  `json:"sessionId"`
	Cwd      string  `json:"cwd"`
	LastCall int     `json:"lastToolCall"` // tool call ids are "call-<n>"; n never repeats in a session
	Entries  []entry `json:"entries"`
	// Mode, Model and Options are the setup chosen (setup.go); "" and nil
	// are the defaults.
	Mode    string            `json:"mode,omitempty"`
	Model   string            `json:"model,omitempty"`
	Options map[string]string `json:"options,omitempty"`
	// Closed counts the client's session/close requests for the session.
	Closed int `json:"closed,omitempty"`
	// End is how a child's run ended (its stop reason; "" while it runs or
	// when it was cut off), EndError the failure it ended with (replay.go).
	End      string `json:"end,omitempty"`
	EndError string `json:"endError,omitempty"`
}

// entry is one session/update the agent sent (or one whole user prompt), in
// order, so that replaying the entries reproduces the original stream.
type entry struct {
	Role string `json:"role"`
	Text string `json:"text,omitempty"`
	// Bulk > 0 stands for the agent chunks "chunk 1\n" … "chunk <Bulk>\n" of
	// a /bulk directive, so that a million chunks cost one line on disk.
	Bulk       int               `json:"bulk,omitempty"`
	ToolCallID string            `json:"toolCallId,omitempty"`
	Title      string            `json:"title,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Status     string            `json:"status,omitempty"`
	Path       string            `json:"path,omitempty"` // absolute location of the tool call
	RawInput   map[string]string `json:"rawInput,omitempty"`
}

func bulkChunk(i int) string { return fmt.Sprintf("chunk %d\n", i) }

// replay sends the session/update notifications that e records.
func (a *agent) replay(ctx context.Context, id string, e entry) error {
	switch e.Role {
	case roleUser:
		return a.send(ctx, id, acp.UpdateUserMessageText(e.Text))
	case roleAgent:
		if e.Bulk > 0 {
			for i := 1; i <= e.Bulk; i++ {
				if err := a.send(ctx, id, acp.UpdateAgentMessageText(bulkChunk(i))); err != nil {
					return err
				}
			}
			return nil
		}
		return a.send(ctx, id, acp.UpdateAgentMessageText(e.Text))
	case roleThought:
		return a.send(ctx, id, acp.UpdateAgentThoughtText(e.Text))
	case roleToolCall:
		opts := []acp.ToolCallStartOpt{
			acp.WithStartKind(acp.ToolKind(e.Kind)),
			acp.WithStartStatus(acp.ToolCallStatus(e.Status)),
		}
		if e.Path != "" {
			opts = append(opts, acp.WithStartLocations([]acp.ToolCallLocation{{Path: e.Path}}))
		}
		if e.RawInput != nil {
			opts = append(opts, acp.WithStartRawInput(e.RawInput))
		}
		return a.send(ctx, id, acp.StartToolCall(acp.ToolCallId(e.ToolCallID), e.Title, opts...))
	case roleToolResult:
		return a.send(ctx, id, acp.UpdateToolCall(acp.ToolCallId(e.ToolCallID),
			acp.WithUpdateStatus(acp.ToolCallStatus(e.Status)),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(e.Text))})))
	}
	return nil // unknown roles come from a newer or hand-edited file; skip them
}

// validID keeps client-supplied ids from naming files outside Dir.
// validID is compiled on first use: every kandev invocation pays for start-up work.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`) })

// load reads a session file; a malformed or unknown id yields os.ErrNotExist.
func load(dir, id string) (*sessionFile, error) {
	if !validID().MatchString(id) {
		return nil, os.ErrNotExist
	}
	f, err := os.Open(filepath.Join(dir, id+".json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sf sessionFile
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&sf); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	sf.ID = id
	return &sf, nil
}

// save replaces the session file atomically, so a crash leaves either the
// old or the new conversation, never a torn one.
func save(dir string, sf *sessionFile) (err error) {
	tmp, err := os.CreateTemp(dir, "."+sf.ID+".*.tmp") // mode 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriter(tmp)
	if err := json.NewEncoder(w).Encode(sf); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, sf.ID+".json")); err != nil {
		return err
	}
	// Persist the rename itself; failure here is not worth failing the turn.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
