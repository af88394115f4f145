package surgery

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// BoundaryError is a seq that is not a turn boundary of the conversation's
// current epoch (0, or a turn's end): Before and After are the nearest
// boundaries (-1 when there is none on that side).
type BoundaryError struct {
	SessionID     string
	Seq           int64
	Before, After int64
}

func (e *BoundaryError) Error() string {
	near := fmt.Sprintf("%d", e.Before)
	if e.After >= 0 {
		near += fmt.Sprintf(" or %d", e.After)
	}
	return fmt.Sprintf("seq %d is not a turn boundary of session %s; the nearest are %s (0 is the start; kandev events %s --type turn_ended lists them)", e.Seq, e.SessionID, near, e.SessionID)
}

// FileChange is a tool call that changed files: a rewind does not undo it.
type FileChange struct {
	Seq        int64  `json:"seq"`
	ToolCallID string `json:"tool_call_id"`
	Title      string `json:"title"`
	Kind       string `json:"kind"`
}

// RewindReport is what a rewind or a clear did.
type RewindReport struct {
	SessionID   string       `json:"session_id"`
	Epoch       int          `json:"epoch"`
	ToSeq       int64        `json:"to_seq"`
	FileChanges []FileChange `json:"file_changes"`
}

// currentEpoch reads the whole log of session id and returns its current
// epoch. Rewinds and forks are rare, explicit commands: reading the log once
// is their cost.
func currentEpoch(h *state.Home, id string) ([]eventlog.Event, error) {
	evs, _, err := eventlog.ReadAll(h.LogPath(id))
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	}
	return history.CurrentEpoch(evs), nil
}

// checkCut refuses a seq that is not a boundary of epoch.
func checkCut(id string, epoch []eventlog.Event, seq int64) error {
	if ok, before, after := history.CheckBoundary(history.Boundaries(epoch), seq); !ok {
		return &BoundaryError{SessionID: id, Seq: seq, Before: before, After: after}
	}
	return nil
}

// Rewind makes session id continue as if nothing after seq to had been
// said (to 0: a clear). The log keeps everything and gets an epoch fence;
// the agent gets a fresh session with the next prompt, carrying the resume
// context of what is kept. It refuses while an owner runs (a turn, or a
// warm agent: state.ErrOwnerBusy) and for a finished session. An
// interrupted turn is repaired first.
func Rewind(h *state.Home, id string, to int64) (*RewindReport, error) {
	if _, err := Repair(h, id, eventlog.StopShutdown, false); err != nil {
		return nil, busyForSurgery(id, err)
	}
	held, err := h.Hold(id, history.LogOptions)
	if err != nil {
		return nil, busyForSurgery(id, err)
	}
	defer held.Release()
	s, err := h.LoadSession(id) // under the lock held holds
	if err != nil {
		return nil, err
	}
	switch {
	case state.IsTerminal(s.State):
		return nil, fmt.Errorf("%w: session %s is %s; fork it instead: kandev fork %s --at SEQ", owner.ErrNotResumable, id, s.State, id)
	case s.CurrentTurn != "":
		return nil, fmt.Errorf("%w: session %s has an unfinished turn; run kandev repair %s first", state.ErrOwnerBusy, id, id)
	}
	log, _, err := held.Log()
	if err != nil {
		return nil, err
	}
	if err := owner.FinishPending(h, log, s); err != nil {
		return nil, err
	}
	epoch, err := currentEpoch(h, id)
	if err != nil {
		return nil, err
	}
	if err := checkCut(id, epoch, to); err != nil {
		return nil, err
	}
	rep := &RewindReport{SessionID: id, ToSeq: to, FileChanges: []FileChange{}}
	for _, c := range history.FileChanges(epoch, to) {
		rep.FileChanges = append(rep.FileChanges, FileChange{Seq: c.Seq, ToolCallID: c.ToolCallID, Title: c.ToolName, Kind: c.ToolKind})
	}
	r := eventlog.Rewind{Epoch: s.Epoch + 1, ToSeq: to}
	rep.Epoch = r.Epoch
	// The record first, with the fence pending: a crash before the fence is
	// in the log leaves it for the next command to append, once.
	s, err = held.Update(func(s *state.Session) error {
		s.BeginRewind(r)
		// Nothing said before the fence is sent any more: neither a first
		// prompt nor an interrupted turn's message waits behind it.
		s.InitialPrompt = ""
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, owner.FinishRewind(h, log, s)
}

// busyForSurgery says what to do when an owner holds the session.
func busyForSurgery(id string, err error) error {
	if errors.Is(err, state.ErrOwnerBusy) {
		return fmt.Errorf("%w: session %s is running in another kandev process (a turn, or a warm agent); wait until it is idle (kandev close %s ends a warm agent), then run this again", state.ErrOwnerBusy, id, id)
	}
	return err
}

// AdvertisedCommands are the command names of the newest
// available_commands_update in the log at path (nil when the agent never
// advertised any), read from the end.
func AdvertisedCommands(path string) []string {
	var names []string
	_, _ = eventlog.ScanBackward(path, func(_ int64, line []byte) bool {
		if !bytes.Contains(line, []byte("available_commands_update")) {
			return true
		}
		upd := gjson.GetBytes(line, "data")
		if upd.Get("sessionUpdate").String() != "available_commands_update" {
			return true
		}
		names = []string{}
		upd.Get("availableCommands.#.name").ForEach(func(_, n gjson.Result) bool {
			names = append(names, n.String())
			return true
		})
		return false
	})
	return names
}

// CompactionCommand is the agent's own command for compacting its
// conversation among the advertised names ("" when it has none).
func CompactionCommand(advertised []string) string {
	for _, name := range advertised {
		if name == "compact" {
			return name
		}
	}
	return ""
}
