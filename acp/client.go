package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// client is kandev's side of the protocol: files confined to the session's
// cwd, permissions answered by the owner's policy.
type client struct{ c *Conn }

func (cl *client) confine(path string) (string, error) {
	root, err := filepath.EvalSymlinks(cl.c.opts.Cwd)
	if err != nil {
		return "", err
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	// Resolve symlinks of the longest existing prefix, so a link cannot lead out.
	resolved := p
	for dir, rest := p, ""; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			resolved = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	if resolved != root && !strings.HasPrefix(resolved, root+string(filepath.Separator)) {
		return "", sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s is outside the session directory %s", path, root)})
	}
	return resolved, nil
}

func (cl *client) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	path, err := cl.confine(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	text := string(b)
	if p.Line != nil || p.Limit != nil {
		lines := strings.SplitAfter(text, "\n")
		start := 0
		if p.Line != nil && *p.Line > 1 {
			start = min(*p.Line-1, len(lines))
		}
		end := len(lines)
		if p.Limit != nil && *p.Limit >= 0 {
			end = min(start+*p.Limit, len(lines))
		}
		text = strings.Join(lines[start:end], "")
	}
	if n := encodedLen(text); n > maxReadAnswer {
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf(
			"%s is too large to send in one answer (%d bytes encoded, at most %d): read it in parts with line and limit", p.Path, n, maxReadAnswer)})
	}
	return sdk.ReadTextFileResponse{Content: text}, nil
}

// maxReadAnswer bounds an fs/read_text_file answer, one JSON line on the
// agent's stdin. Agents read their input line by line with a bounded buffer
// (the ACP Go SDK: 10 MiB); a longer line breaks their connection and ends
// the turn as "cancelled". Refusing it keeps the turn going with a clear error.
const maxReadAnswer = 8 << 20

// encodedLen is the length of text as a JSON string; only texts near the
// bound are encoded to find out (an encoded byte is at most 6 bytes).
func encodedLen(text string) int {
	if len(text)*6 <= maxReadAnswer {
		return len(text)
	}
	b, _ := json.Marshal(text)
	return len(b)
}

func (cl *client) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	path, err := cl.confine(p.Path)
	if err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return sdk.WriteTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	if err := os.WriteFile(path, []byte(p.Content), 0o644); err != nil {
		return sdk.WriteTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.WriteTextFileResponse{}, nil
}

func (cl *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	if cl.c.opts.Permission == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
	}
	return cl.c.opts.Permission(ctx, p), nil
}

// SessionUpdate is not reached: updates are intercepted before the SDK.
func (cl *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	b, _ := json.Marshal(n)
	cl.c.q.Push(queued{params: b})
	return nil
}
