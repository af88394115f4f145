package editor

import (
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
)

// metaKey reads _meta.kandev.key: the editor's idempotency key for a
// session/prompt, as kandev prompt --key takes it.
func metaKey(meta map[string]any) string {
	k, _ := meta["kandev"].(map[string]any)
	key, _ := k["key"].(string)
	return key
}

// promptOnce runs the editor's prompt at most once per session and key
// (owner.Dial with a key): a retried request with the same key, from this
// connection or another, follows the same turn or answers again with how it
// ended. An owner this process runs serves it from the inbox like any
// other process's input.
func (s *session) promptOnce(text, key string) (sdk.PromptResponse, error) {
	s.turn.Lock()
	defer s.turn.Unlock()
	h := s.srv.opts.Home
	if err := h.CheckLease(s.id, s.srv.opts.Holder, time.Now()); err != nil {
		return sdk.PromptResponse{}, err
	}
	nameAfter(h, s.id, text)
	job, err := s.srv.opts.Job(s.id)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	shown := s.updatesFor(false)
	source := ""
	job.Prompt, job.Ask, job.AskOption, job.Progress = text, nil, s.askOption, nil
	job.Emit = func(e eventlog.Event) {
		if e.Type == eventlog.EventTurnStarted {
			source = e.Source
		}
		if e.Type == eventlog.EventUserMessage && source != eventlog.SourceContinuation {
			return // the editor shows its own prompt
		}
		s.send(shown.of(e))
	}
	d, err := owner.Dial(s.srv.opts.Ctx, job, owner.Request{Follows: owner.FollowsInput, Key: key})
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	stop := ""
	if d != nil && d.Result != nil {
		stop = d.Result.StopReason
	}
	if r, ok := acpStop(stop); ok {
		return sdk.PromptResponse{StopReason: r}, nil
	}
	return sdk.PromptResponse{}, fmt.Errorf("the turn ended with %s; see kandev events %s", stop, s.id)
}
