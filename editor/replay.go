package editor

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// replay shows the stored conversation to the editor as session/update
// notifications, in log order, redacted as it is read: the current epoch, as
// the transcript shows it (not what a rewind or clear set aside).
// Consecutive chunks of one stream are sent as one chunk: a turn that
// streamed ten thousand pieces replays as a few notifications, which no
// editor's queue overflows on.
func (s *session) replay(ctx context.Context) error {
	ups := s.updatesFor(true)
	var held *sdk.SessionUpdate
	flush := func() {
		if held != nil {
			s.send([]sdk.SessionUpdate{*held})
			held = nil
		}
	}
	evs, _, err := eventlog.ReadAll(s.srv.opts.Home.LogPath(s.id))
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("cannot read the log of session %s: %w", s.id, err)
	}
	turn := ""
	for _, e := range history.CurrentEpoch(evs) {
		if ctx.Err() != nil {
			break
		}
		history.RedactEvent(&e)
		if e.TurnID != turn || e.ChildID != "" { // a child's update goes out in its place
			flush()
			turn = e.TurnID
		}
		for _, u := range ups.of(e) {
			if held != nil && merge(held, u) {
				continue
			}
			flush()
			u := u
			held = &u
		}
	}
	flush()
	return nil
}

// merge appends u's text to held when both are text chunks of the same
// stream (user, agent or thought), and reports whether it did.
func merge(held *sdk.SessionUpdate, u sdk.SessionUpdate) bool {
	text := func(c sdk.ContentBlock) *sdk.ContentBlockText { return c.Text }
	switch {
	case held.AgentMessageChunk != nil && u.AgentMessageChunk != nil:
		return appendText(text(held.AgentMessageChunk.Content), text(u.AgentMessageChunk.Content))
	case held.AgentThoughtChunk != nil && u.AgentThoughtChunk != nil:
		return appendText(text(held.AgentThoughtChunk.Content), text(u.AgentThoughtChunk.Content))
	case held.UserMessageChunk != nil && u.UserMessageChunk != nil:
		return appendText(text(held.UserMessageChunk.Content), text(u.UserMessageChunk.Content))
	}
	return false
}

func appendText(into, more *sdk.ContentBlockText) bool {
	if into == nil || more == nil {
		return false
	}
	into.Text += more.Text
	return true
}
