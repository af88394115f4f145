package demoagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// With Options.LegacyModels the demo agent speaks the model list ACP 1.x
// removed, as Gemini CLI still does: its session/new, load and resume
// answers carry `models` {currentModelId, availableModels}, and
// session/set_model changes the model. The ACP Go SDK has neither, so the
// requests are taken off the agent's input before the SDK sees them
// (filterLegacy), and the list is added to the answers on the way out
// (lockedWriter). Without the option every request goes to the SDK.

// lockedWriter writes one message at a time, the SDK's and the agent's own,
// adding the model list to the answers that filterLegacy marked and the
// session scope to elicitations (ask.go).
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	models map[string]string // JSON-RPC id of a new, load or resume → its session ("" for new)
	a      *agent
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q, ok := withSessionScope(p); ok { // ask.go
		if _, err := l.w.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if len(l.models) > 0 {
		if q, ok := l.withModels(p); ok {
			if _, err := l.w.Write(q); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return l.w.Write(p)
}

// withModels adds the model list to an answer filterLegacy marked.
func (l *lockedWriter) withModels(line []byte) ([]byte, bool) {
	var m map[string]any
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil {
		return nil, false
	}
	id, _ := json.Marshal(m["id"])
	sid, marked := l.models[string(id)]
	res, _ := m["result"].(map[string]any)
	if !marked || res == nil {
		return nil, false
	}
	delete(l.models, string(id))
	if sid == "" {
		sid, _ = res["sessionId"].(string)
	}
	model := defaultModel
	if s := l.a.lookup(sid); s != nil {
		s.turn.Lock()
		_, model, _ = setupOf(&s.file)
		s.turn.Unlock()
	}
	avail := []map[string]string{}
	for _, v := range demoModels {
		avail = append(avail, map[string]string{"modelId": v, "name": v})
	}
	res["models"] = map[string]any{"currentModelId": model, "availableModels": avail}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return append(b, '\n'), true
}

// legacyRequest is what filterLegacy reads of a request.
type legacyRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"sessionId"`
		ModelID   string `json:"modelId"`
	} `json:"params"`
}

// filterLegacy copies r to the SDK's input; with LegacyModels it answers
// session/set_model itself and marks the answers that get the model list.
func (a *agent) filterLegacy(r io.Reader, sdkIn *io.PipeWriter, out *lockedWriter) {
	out.a = a
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if bytes.Contains(line, []byte(`"initialize"`)) {
			a.noteClientSession(line) // setup.go
		}
		var req legacyRequest
		if len(line) > 0 && a.opts.LegacyModels && json.Unmarshal(line, &req) == nil && len(req.ID) > 0 {
			switch req.Method {
			case "session/set_model":
				a.answerSetModel(req, out)
				line = nil
			case acp.AgentMethodSessionNew, acp.AgentMethodSessionLoad, acp.AgentMethodSessionResume:
				out.mu.Lock()
				if out.models == nil {
					out.models = map[string]string{}
				}
				out.models[string(req.ID)] = req.Params.SessionID
				out.mu.Unlock()
			}
		}
		if len(line) > 0 {
			if _, werr := sdkIn.Write(line); werr != nil {
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

func (a *agent) answerSetModel(req legacyRequest, out *lockedWriter) {
	msg := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	err := a.changeSetup(req.Params.SessionID, func(f *sessionFile) error {
		if !slices.Contains(demoModels, req.Params.ModelID) {
			return invalidParams("unknown model " + req.Params.ModelID)
		}
		f.Model = req.Params.ModelID
		return nil
	})
	var re *acp.RequestError
	switch {
	case errors.As(err, &re):
		msg["error"] = re
	case err != nil:
		msg["error"] = map[string]any{"code": -32603, "message": err.Error()}
	default:
		msg["result"] = map[string]any{}
	}
	b, _ := json.Marshal(msg)
	_, _ = out.Write(append(b, '\n'))
}
