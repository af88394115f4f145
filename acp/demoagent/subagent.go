package demoagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

// Subagents, as Claude's ACP adapter (0.101) serves them: /subagent NAME
// TEXT runs a foreground child, /subagent-bg NAME TEXT one that outlives
// the turn. A client that declared clientCapabilities.subagents gets each
// child as its own session in the subagents RFD form (agent-client-protocol
// #1992): the parent's subagent_update announces it running, a pair of
// session_message carries its prompt, the child's own updates carry the
// child's session id, and a last subagent_update says it is idle with a
// stop reason. Any other client gets the child folded into one Agent tool
// call of the parent, its text the call's content. The SDK types none of
// these updates, so they are written past it (sendRaw).

// childSeparator splits TEXT into the child's directive lines.
const childSeparator = ";"

// child is a running subagent, for session/cancel.
type child struct {
	parent string
	cancel context.CancelFunc
}

// children are the running subagents by their session id.
type children struct {
	mu  sync.Mutex
	run map[string]child
}

func (c *children) add(id string, ch child) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run == nil {
		c.run = map[string]child{}
	}
	c.run[id] = ch
}

func (c *children) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.run, id)
}

// cancel stops the child id, or every child of the session id; it reports
// whether id named one or the other.
func (c *children) cancel(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.run[id]; ok {
		ch.cancel()
		return true
	}
	found := false
	for _, ch := range c.run {
		if ch.parent == id {
			ch.cancel()
			found = true
		}
	}
	return found
}

// fold collects the text of a child a client is not shown as a session.
type fold struct {
	mu sync.Mutex
	b  strings.Builder
}

// foldUpdate adds u to the folded child's text; it reports whether id is a
// folded child.
func (a *agent) foldUpdate(id string, u acp.SessionUpdate) bool {
	v, ok := a.folded.Load(id)
	if !ok {
		return false
	}
	f := v.(*fold)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		f.b.WriteString(u.AgentMessageChunk.Content.Text.Text)
	case u.ToolCall != nil:
		f.b.WriteString("\n[" + u.ToolCall.Title + "]\n")
	}
	return true
}

// subagent runs TEXT as a child named name; background children return at
// once and run on after the turn.
func (t *turn) subagent(name, text string, background bool) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := "sub-" + hex.EncodeToString(b[:])
	launch := "agent-" + id
	parent := t.s.file.ID
	cs := &session{file: sessionFile{ID: id, Cwd: t.s.file.Cwd, Entries: []entry{{Role: roleUser, Text: text}}}}
	base := t.ctx
	if background {
		base = t.a.alive
	}
	ctx, cancel := context.WithCancel(base)
	t.a.kids.add(id, child{parent: parent, cancel: cancel})
	ct := &turn{a: t.a, s: cs, ctx: ctx}
	if !t.a.subagents.Load() {
		return t.foldedChild(ct, name, text, launch, background)
	}
	if err := t.a.announce(t.ctx, parent, id, name, launch, text); err != nil {
		cancel()
		t.a.kids.remove(id)
		return err
	}
	// Kept for a load's replay (child_replay.go), as Claude Code keeps a
	// subagent's transcript beside its session's.
	t.s.file.Entries = append(t.s.file.Entries, entry{Role: roleChild, ToolCallID: id, Title: name, Text: text})
	_ = save(t.a.opts.Dir, &cs.file)
	run := func() error {
		defer cancel()
		defer t.a.kids.remove(id)
		err := ct.run(strings.ReplaceAll(text, childSeparator, "\n"))
		cs.file.End, cs.file.EndError = childStop(ctx, err)
		_ = save(t.a.opts.Dir, &cs.file)
		return t.a.childEnded(parent, id, launch, workState(cs.file.End, cs.file.EndError), lastText(cs), !background && err == nil)
	}
	if background {
		t.a.busy.Add(1)
		go func() {
			defer t.a.busy.Done()
			_ = run()
		}()
		return t.message(roleAgent, "Started "+name+" in the background.")
	}
	return run()
}

// announce tells the client that the child id runs, and gives it its
// prompt: the parent's outgoing view, then the child's incoming one.
func (a *agent) announce(ctx context.Context, parent, id, name, launch, prompt string) error {
	err := a.sendRaw(ctx, parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": id,
		"title": name, "description": "general-purpose", "capabilities": map[string]any{"cancel": map[string]any{}},
		"state": map[string]any{"state": "running"}})
	if err != nil {
		return err
	}
	msg := func(view string) map[string]any {
		return map[string]any{"sessionUpdate": "session_message", "messageId": launch, "senderSessionId": parent,
			"recipientSessionId": id, "content": []any{map[string]any{"type": "text", "text": prompt}}, view: launch}
	}
	if err := a.sendRaw(ctx, parent, msg("recipientMessageId")); err != nil {
		return err
	}
	return a.sendRaw(ctx, id, msg("senderMessageId"))
}

// childStop is how a child's run ended (ctx: the child's, to tell a
// cancel): its stop reason and, for a failure, the error.
func childStop(ctx context.Context, runErr error) (stop, failure string) {
	switch {
	case ctx.Err() != nil, errors.Is(runErr, errAborted):
		return "cancelled", ""
	case runErr != nil:
		return "error", runErr.Error()
	}
	return "end_turn", ""
}

// workState is the RFD work state of a child that ended with stop (""
// when its end was not seen: idle without a stop reason, as Claude's
// adapter replays such a child).
func workState(stop, failure string) map[string]any {
	state := map[string]any{"state": "idle"}
	if stop != "" {
		state["stopReason"] = stop
	}
	if failure != "" {
		state["error"] = map[string]any{"code": -32603, "message": failure}
	}
	return state
}

// childEnded reports the child's end on its parent and, for a foreground
// child that answered, its answer as the parent's incoming message.
func (a *agent) childEnded(parent, id, launch string, state map[string]any, answer string, reply bool) error {
	// The parent may be cancelled too: the end is still told, on the agent's life.
	err := a.sendRaw(a.alive, parent, map[string]any{"sessionUpdate": "subagent_update", "sessionId": id, "state": state})
	if err != nil || !reply || answer == "" {
		return err
	}
	return a.sendRaw(a.alive, parent, map[string]any{"sessionUpdate": "session_message", "messageId": launch + ":reply",
		"senderSessionId": id, "recipientSessionId": parent, "content": []any{map[string]any{"type": "text", "text": answer}}})
}

// foldedChild runs the child as one Agent tool call of the parent, whose
// content is the child's text, as Claude's adapter shows a subagent to a
// client that did not declare subagents. A background child's call
// completes at once and its text is shown to nobody.
func (t *turn) foldedChild(ct *turn, name, text, launch string, background bool) error {
	f := &fold{}
	t.a.folded.Store(ct.s.file.ID, f)
	input := map[string]any{"description": name, "prompt": text, "subagent_type": "general-purpose", "run_in_background": background}
	err := t.a.send(t.ctx, t.s.file.ID, acp.StartToolCall(acp.ToolCallId(launch), "Agent: "+name,
		acp.WithStartKind(acp.ToolKindThink), acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartRawInput(input)))
	if err != nil {
		return err
	}
	finish := func() error {
		defer t.a.folded.Delete(ct.s.file.ID)
		defer t.a.kids.remove(ct.s.file.ID)
		runErr := ct.run(strings.ReplaceAll(text, childSeparator, "\n"))
		if background {
			return runErr
		}
		status := acp.ToolCallStatusCompleted
		if runErr != nil {
			status = acp.ToolCallStatusFailed
		}
		f.mu.Lock()
		out := strings.TrimSpace(f.b.String())
		f.mu.Unlock()
		return t.a.send(t.ctx, t.s.file.ID, acp.UpdateToolCall(acp.ToolCallId(launch), acp.WithUpdateStatus(status),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(out))})))
	}
	if !background {
		return finish()
	}
	err = t.a.send(t.ctx, t.s.file.ID, acp.UpdateToolCall(acp.ToolCallId(launch), acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock("Async agent launched: " + name))})))
	t.a.busy.Add(1)
	go func() {
		defer t.a.busy.Done()
		_ = finish()
	}()
	return err
}

// lastText is the child's last agent message (its chunks after the last
// "\n" separator), its answer.
func lastText(s *session) string {
	var parts []string
	for i := len(s.file.Entries) - 1; i >= 0; i-- {
		e := s.file.Entries[i]
		if e.Role != roleAgent || e.Text == "\n" {
			if len(parts) > 0 {
				break
			}
			continue
		}
		parts = append([]string{e.Text}, parts...)
	}
	return strings.Join(parts, "")
}

// sendRaw writes one session/update whose update the SDK does not type,
// honouring Options.Delay, through the same writer as the SDK's messages.
func (a *agent) sendRaw(ctx context.Context, id string, update map[string]any) error {
	if a.opts.Delay > 0 {
		if err := sleep(ctx, a.opts.Delay); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": acp.ClientMethodSessionUpdate,
		"params": map[string]any{"sessionId": id, "update": update}})
	if err != nil {
		return err
	}
	_, err = a.out.Write(append(b, '\n'))
	return err
}
