//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kandev/kandev/history"
)

// cmdEmit measures the agent's own emit time: a bare JSON-RPC client that
// does nothing with the updates but count them times one session/prompt
// (in a fresh agent session) or one session/load, from the request to its
// answer. That is the least any client can take for the same work.
func cmdEmit(args []string) error {
	fs := flag.NewFlagSet("emit", flag.ExitOnError)
	out := fs.String("out", "", "results directory")
	name := fs.String("name", "", "measurement name")
	runs := fs.Int("runs", 5, "timed runs (after one warm-up)")
	cwd := fs.String("cwd", "", "working directory")
	loadTok := fs.String("load", "", "time session/load of this agent session")
	prompt := fs.String("prompt", "", "time session/prompt of this text in a new agent session")
	flags, agent := splitDashDash(args)
	fs.Parse(flags)
	if *out == "" || *name == "" || *cwd == "" || len(agent) == 0 || (*loadTok == "") == (*prompt == "") {
		return errors.New("emit: -out, -name, -cwd, one of -load/-prompt and an agent command after -- are required")
	}
	m := &Measurement{Name: *name, Command: strings.Join(agent, " ")}
	fmt.Fprintf(os.Stderr, "  measuring %-28s bare JSON-RPC reader, %s\n", *name, history.Clip(strings.Join(agent, " "), 80))
	for i := 0; i < *runs+1; i++ {
		d, updates, err := emitOnce(agent, *cwd, *loadTok, *prompt)
		if err != nil {
			m.Error = err.Error()
			break
		}
		m.Note = fmt.Sprintf("%d updates", updates)
		if i > 0 {
			m.RunsMS = append(m.RunsMS, d.Seconds()*1000)
		}
	}
	m.finish()
	if m.Error != "" {
		fmt.Fprintf(os.Stderr, "  %s: %s\n", *name, m.Error)
	}
	return save(*out, m)
}

type rpcPeer struct {
	in      io.WriteCloser
	out     *bufio.Reader
	nextID  int
	updates int
}

func (p *rpcPeer) call(method string, params any) (json.RawMessage, error) {
	p.nextID++
	id := p.nextID
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	want := []byte(fmt.Sprintf(`"id":%d`, id))
	for {
		line, err := p.out.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			full := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = p.out.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the agent closed its output: %w", method, err)
		}
		// The hot path: an update notification is counted, not decoded.
		if bytes.Contains(line, []byte(`"method":"session/update"`)) {
			p.updates++
			continue
		}
		if !bytes.Contains(line, want) {
			if bytes.Contains(line, []byte(`"method"`)) { // a request from the agent: refuse it
				var req struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(line, &req) == nil && len(req.ID) > 0 {
					resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
					_, _ = p.in.Write(append(resp, '\n'))
				}
			}
			continue
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil || resp.ID != id {
			continue
		}
		if len(resp.Error) > 0 && string(resp.Error) != "null" {
			return nil, fmt.Errorf("%s: %s", method, resp.Error)
		}
		return resp.Result, nil
	}
}

func emitOnce(agent []string, cwd, loadTok, prompt string) (time.Duration, int, error) {
	cmd := exec.Command(agent[0], agent[1:]...)
	cmd.Dir = cwd
	dieWithParent(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	p := &rpcPeer{in: in, out: bufio.NewReaderSize(outPipe, 1<<20)}
	if _, err := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		return 0, 0, fmt.Errorf("%v %s", err, lastLine(stderr.String()))
	}
	var start time.Time
	if loadTok != "" {
		start = time.Now()
		_, err = p.call("session/load", map[string]any{"sessionId": loadTok, "cwd": cwd, "mcpServers": []any{}})
	} else {
		var res json.RawMessage
		res, err = p.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
		if err == nil {
			var ns struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(res, &ns)
			start = time.Now()
			_, err = p.call("session/prompt", map[string]any{"sessionId": ns.SessionID, "prompt": []any{map[string]any{"type": "text", "text": prompt}}})
		}
	}
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%v %s", err, lastLine(stderr.String()))
	}
	return d, p.updates, nil
}
