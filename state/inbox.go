package state

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/proc"
	"github.com/kandev/kandev/internal/safefile"
)

// Input kinds queued in a session's inbox.
const (
	InputPrompt = "prompt"
	InputCancel = "cancel"
	InputStop   = "stop"
	// InputClose ends a live owner (Now: cancel the running turn first).
	InputClose = "close"
	// InputApprove and InputDeny answer a deferred permission request.
	InputApprove = "approve"
	InputDeny    = "deny"
	// InputAnswer answers an agent's parked question (Text: the answer;
	// kandev deny declines it).
	InputAnswer = "answer"
	// InputWithdrawn is a prompt its sender withdrew before any turn served
	// it (the turn was refused): owners pass over it as over any input
	// that is not a prompt.
	InputWithdrawn = "withdrawn"
)

// FromEditor marks an input an editor sent through kandev acp (Input.From).
const FromEditor = "editor"

// FromFollower marks a cancel that the command following its turn sent on
// Ctrl-C (Input.From).
const FromFollower = "follower"

// Input is one entry of a session's inbox: a prompt or a control request
// that another kandev process queued for the owner.
type Input struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Text   string `json:"text,omitempty"`
	Holder string `json:"holder,omitempty"`
	Now    bool   `json:"now,omitempty"`    // close: cancel the running turn first
	Always bool   `json:"always,omitempty"` // approve: pick the "always" option when offered
	// Permissions is the permission mode of a prompt's sender: its turn's
	// requests are answered under it, not under the owner's.
	Permissions string `json:"permissions,omitempty"`
	// LingerSeconds is a prompt sender's --linger, when it gave one: the
	// owner lingers that long after the turn.
	LingerSeconds *int64 `json:"linger_seconds,omitempty"`
	// RequestID names the parked permission request an approve or deny
	// answers; an answer applies to that request only.
	RequestID string `json:"request_id,omitempty"`
	// Ask names the sender of a prompt under permission mode ask that has a
	// terminal: the owner parks its turn's requests for that sender to ask
	// and answer (by request_id), wherever the owner runs.
	Ask *Asker `json:"ask,omitempty"`
	// Child makes a cancel one of a child session of the agent (kandev
	// cancel --child): the turn goes on.
	Child string `json:"child,omitempty"`
	// ForInput limits a cancel to the turn that serves that prompt ("" for
	// whatever turn runs).
	ForInput string `json:"for_input,omitempty"`
	// ForTurn limits a cancel to that turn ("" for whatever turn runs).
	ForTurn string `json:"for_turn,omitempty"`
	// ForFollowUpOf limits a cancel to the follow-up of that interrupted
	// turn (its continuation, or its message sent again): a Ctrl-C in the
	// resume that follows it, before or while it runs.
	ForFollowUpOf string `json:"for_follow_up_of,omitempty"`
	// Scrubbed marks a served prompt whose text was removed from the inbox.
	Scrubbed bool   `json:"scrubbed,omitempty"`
	From     string `json:"from,omitempty"` // FromEditor, or "" for a kandev command
	Key      string `json:"key,omitempty"`  // prompt: the sender's idempotency key (EnqueueOnce)
	// Steer: a prompt for the running turn (kandev prompt --steer); an
	// owner whose agent steers adds it to that turn, otherwise it is served
	// as the next turn like any prompt.
	Steer bool `json:"steer,omitempty"`
	// Unattended: its sender does not follow it (prompt --no-follow), so
	// it is treated as unattended work ([limits]).
	Unattended bool      `json:"unattended,omitempty"`
	QueuedAt   time.Time `json:"queued_at"`
	Offset     int64     `json:"-"` // byte offset just past this entry
	Start      int64     `json:"-"` // byte offset of this entry
}

// ParkedRequest is a permission request that waits for kandev approve or
// kandev deny (permission mode defer), as the record lists it.
type ParkedRequest struct {
	ID          string    `json:"request_id"`
	TurnID      string    `json:"turn_id,omitempty"`
	ToolName    string    `json:"tool_name,omitempty"`
	ToolCallID  string    `json:"tool_call_id,omitempty"`
	RequestedAt time.Time `json:"requested_at"`
	// After and AfterAt name the request the owner resolved last before
	// this one was asked, and when: an answer sent for that one may land
	// on this one.
	After   string     `json:"after_request,omitempty"`
	AfterAt *time.Time `json:"after_resolved_at,omitempty"`
	// Kind is ParkedQuestion for an agent's question to the person
	// (answered with kandev answer), "" for a permission request.
	Kind string `json:"kind,omitempty"`
	// Schema is a question's requested schema (what kandev answer checks).
	Schema json.RawMessage `json:"schema,omitempty"`
}

// ParkedQuestion is the Kind of a parked question.
const ParkedQuestion = "question"

// Asker is the process that asks its person about the permission requests
// of a turn (its sender, under ask, with a terminal on stdin). While it
// runs the owner waits for its answer; once it is gone nobody is left to
// ask, and the request is denied.
type Asker struct {
	PID   int    `json:"pid"`
	Start string `json:"start,omitempty"`
}

// ThisAsker is the asker that is this process.
func ThisAsker() *Asker {
	pid := os.Getpid()
	return &Asker{PID: pid, Start: proc.ProcessStart(pid)}
}

// Alive reports whether the asker still runs.
func (a *Asker) Alive() bool { return a != nil && proc.ProcessAlive(a.PID, a.Start) }

// String is the asker as a flag value (PID:START), what kandev __serve --asker reads.
func (a *Asker) String() string { return strconv.Itoa(a.PID) + ":" + a.Start }

// NewRequestID returns a fresh permission request id.
func NewRequestID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "rq-" + hex.EncodeToString(b[:])
}

// newInputID returns a fresh inbox input id.
func newInputID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "in-" + hex.EncodeToString(b[:])
}

// Enqueue appends in to session id's inbox. The entry is on disk (fsync'd)
// when it returns; appends are serialised by the record lock so lines never
// interleave.
func (h *Home) Enqueue(id string, in *Input) error {
	if in.ID == "" {
		in.ID = newInputID()
	}
	if in.QueuedAt.IsZero() {
		in.QueuedAt = time.Now().UTC()
	}
	unlock, err := h.LockRecord(id)
	if err != nil {
		return err
	}
	defer unlock()
	return h.enqueueLocked(id, in)
}

// enqueueLocked appends in to the inbox; the caller holds the record lock.
func (h *Home) enqueueLocked(id string, in *Input) error {
	if err := CheckPrompt(in.Text); err != nil {
		return err // a queued prompt is bounded as a sent one is: never queued at all
	}
	path := h.InboxPath(id)
	f, err := safefile.Open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, filePerm)
	if err != nil {
		return fmt.Errorf("open inbox of %s: %w", id, err)
	}
	defer f.Close()
	b, _ := json.Marshal(in)
	if _, err := safefile.AppendWhole(f, path, append(b, '\n')); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, safefile.BareCause(err))
	}
	return nil
}

// ReadInbox returns the inputs queued at or after byte offset from, in
// arrival order. An unterminated last line (an enqueue in progress or torn)
// is left for later.
func (h *Home) ReadInbox(id string, from int64) ([]Input, error) {
	f, err := safefile.Open(h.InboxPath(id), os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	var out []Input
	off := from
	// A read error ends the list where it stopped: what was read is queued.
	_ = eventlog.Lines(f, func(line []byte) bool {
		if line[len(line)-1] != '\n' {
			return false // an enqueue in progress, or torn: left for later
		}
		off += int64(len(line))
		var in Input
		if json.Unmarshal(line, &in) == nil && in.ID != "" {
			in.Start, in.Offset = off-int64(len(line)), off
			out = append(out, in)
		}
		return true
	})
	return out, nil
}

// PendingInputs counts the queued prompts past the record's served offset.
func (h *Home) PendingInputs(s *Session) int {
	ins, _ := h.ReadInbox(s.ID, s.InboxOffset)
	n := 0
	for _, in := range ins {
		if in.Kind == InputPrompt {
			n++
		}
	}
	return n
}

// ScrubInput removes the text of a served prompt from the inbox: its line is
// overwritten in place by one of the same length without the text (padded
// with spaces), so the offsets of every other entry stay valid. The prompt
// is in the log (redacted) once served; the inbox must not keep it as typed.
func (h *Home) ScrubInput(id string, in Input) error {
	if in.Kind != InputPrompt || in.Scrubbed || in.Text == "" || in.Offset <= in.Start {
		return nil
	}
	return h.rewriteInput(id, in, func(cur *Input) bool {
		if cur.Scrubbed {
			return false
		}
		cur.Text, cur.Scrubbed = "", true
		return true
	})
}

// WithdrawInput turns queued prompt in, which no turn served, into an
// InputWithdrawn (its text removed, as ScrubInput does): a sender whose
// turn was refused takes its prompt back, so that no later owner serves
// it behind the sender's back. The caller holds the session's owner lock.
func (h *Home) WithdrawInput(id string, in Input) error {
	if in.Kind != InputPrompt || in.Offset <= in.Start {
		return nil
	}
	return h.rewriteInput(id, in, func(cur *Input) bool {
		if cur.Kind != InputPrompt {
			return false
		}
		cur.Kind, cur.Text = InputWithdrawn, ""
		return true
	})
}

// rewriteInput rewrites inbox line in in place with what change makes of
// it (false: leave it), padded with spaces to the same length, so the
// offsets of every other entry stay valid.
func (h *Home) rewriteInput(id string, in Input, change func(*Input) bool) error {
	unlock, err := h.LockRecord(id)
	if err != nil {
		return err
	}
	defer unlock()
	path := h.InboxPath(id)
	f, err := safefile.Open(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open inbox of %s: %w", id, err)
	}
	defer f.Close()
	n := in.Offset - in.Start
	old := make([]byte, n)
	if _, err := f.ReadAt(old, in.Start); err != nil {
		return fmt.Errorf("read %s: %w", path, safefile.BareCause(err))
	}
	var cur Input
	if json.Unmarshal(old, &cur) != nil || cur.ID != in.ID {
		return nil // not the line it was: nothing of ours to change
	}
	if !change(&cur) {
		return nil
	}
	b, _ := json.Marshal(cur)
	if int64(len(b))+1 > n {
		return nil // cannot happen: the text was longer than the mark
	}
	line := append(b, bytes.Repeat([]byte{' '}, int(n)-len(b)-1)...)
	line = append(line, '\n')
	if _, err := f.WriteAt(line, in.Start); err != nil {
		return fmt.Errorf("rewrite %s: %w", path, safefile.BareCause(err))
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, safefile.BareCause(err))
	}
	return nil
}
