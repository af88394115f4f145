package demoagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// session/delete (ACP protocol version 1), which acp-go-sdk v0.13.0 neither
// routes to an agent nor lets one advertise: the demo agent takes the
// request off its input before the SDK sees it, answers it itself, and adds
// sessionCapabilities.delete to its initialize answer on the way out
// (unless Options.NoDelete). Each deletion removes the session's file and
// is noted in <Dir>/deleted-sessions.log.

const deletedLog = "deleted-sessions.log"

// lockedWriter writes one message at a time: the SDK's and the agent's own.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	noDelete bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if !l.noDelete && bytes.Contains(p, []byte(`"agentCapabilities"`)) {
		if q, ok := advertiseDelete(p); ok {
			l.mu.Lock()
			defer l.mu.Unlock()
			if _, err := l.w.Write(q); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// advertiseDelete adds sessionCapabilities.delete to an initialize answer.
func advertiseDelete(line []byte) ([]byte, bool) {
	var m map[string]any
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil {
		return nil, false
	}
	res, _ := m["result"].(map[string]any)
	ac, _ := res["agentCapabilities"].(map[string]any)
	if ac == nil {
		return nil, false
	}
	sc, _ := ac["sessionCapabilities"].(map[string]any)
	if sc == nil {
		sc = map[string]any{}
		ac["sessionCapabilities"] = sc
	}
	sc["delete"] = map[string]any{}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return append(b, '\n'), true
}

// filterDeletes copies r to the SDK's input, answering session/delete
// requests itself (when served) on out.
func (a *agent) filterDeletes(r io.Reader, sdkIn *io.PipeWriter, out *lockedWriter) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if !a.opts.NoDelete && bytes.Contains(line, []byte(`"session/delete"`)) &&
				json.Unmarshal(line, &req) == nil && req.Method == "session/delete" && len(req.ID) > 0 {
				a.answerDelete(req.ID, req.Params.SessionID, out)
			} else if _, werr := sdkIn.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				sdkIn.Close()
			} else {
				sdkIn.CloseWithError(err)
			}
			return
		}
	}
}

func (a *agent) answerDelete(id json.RawMessage, sid string, out *lockedWriter) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if err := a.deleteSession(sid); err != nil {
		msg["error"] = map[string]any{"code": -32002, "message": "Resource not found: session " + sid}
	} else {
		msg["result"] = map[string]any{}
	}
	b, _ := json.Marshal(msg)
	_, _ = out.Write(append(b, '\n'))
}

// deleteSession removes session sid's file and forgets it.
func (a *agent) deleteSession(sid string) error {
	if _, err := load(a.opts.Dir, sid); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(a.opts.Dir, sid+".json")); err != nil {
		return err
	}
	a.mu.Lock()
	delete(a.sessions, sid)
	a.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(a.opts.Dir, deletedLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil
	}
	defer f.Close()
	_, _ = f.WriteString(sid + "\n")
	return nil
}
