package owner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/state"
)

// What a command that follows a turn run by an owner in another process (a
// detached owner it started, or a warm one) does for the person at its
// terminal, so that nobody can tell where the owner runs: it asks about the
// requests the owner parked for it, and it turns its own Ctrl-C and
// SIGTERM into what they mean for the turn (docs/internals.md).

// askParked returns what a follower does with a request its turn's owner
// parked: ask on this command's terminal and queue the answer (nil when
// this command cannot ask: the request then ends the following, parked).
func askParked(ctx context.Context, job Job) func(eventlog.Event) {
	if !callerCanAsk(job) {
		return nil
	}
	return func(e eventlog.Event) {
		if e.ToolKind == ToolKindQuestion {
			askQuestion(ctx, job, e)
			return
		}
		var opts []sdk.PermissionOption
		_ = json.Unmarshal(e.Data, &opts)
		allow, always, ok := job.AskParked(ctx, e.ToolName, opts)
		if !ok {
			return // interrupted: the turn's cancel answers it
		}
		in := &state.Input{Kind: state.InputDeny, RequestID: e.RequestID}
		if allow {
			in.Kind, in.Always = state.InputApprove, always
		}
		if err := job.Home.Enqueue(job.SessionID, in); err != nil && job.Warn != nil {
			job.Warn(fmt.Sprintf("could not answer request %s: %v (kandev approve %s --request %s answers it)", e.RequestID, err, job.SessionID, e.RequestID))
		}
	}
}

// askQuestion asks the person an agent's question its turn's owner parked
// for this command, and queues the answer ("" declines it).
func askQuestion(ctx context.Context, job Job, e eventlog.Event) {
	in := &state.Input{Kind: state.InputDeny, RequestID: e.RequestID}
	if job.AskValue != nil {
		var schema sdk.UnstableElicitationSchema
		_ = json.Unmarshal(e.Data, &schema)
		value, ok := job.AskValue(ctx, e.ToolName, acp.ElicitationFields(schema))
		if !ok {
			return // interrupted: the turn's cancel answers it
		}
		if value != "" {
			in.Kind, in.Text = state.InputAnswer, value
		}
	}
	if err := job.Home.Enqueue(job.SessionID, in); err != nil && job.Warn != nil {
		job.Warn(fmt.Sprintf("could not answer question %s: %v (kandev answer %s --request %s VALUE answers it)", e.RequestID, err, job.SessionID, e.RequestID))
	}
}

// joinedSince reads the log from from to its end, without waiting, for
// t's message joining the running turn (--steer): a Ctrl-C right after it
// joined must cancel that turn, though the follower has not read it yet.
func joinedSince(path string, from int64, t *inputTurn) {
	if t.steered || t.inputID == "" {
		return
	}
	now, cancel := context.WithCancel(context.Background())
	cancel() // read what is there, wait for nothing more
	_, _ = eventlog.Follow(now, path, from, func(e eventlog.Event) bool {
		if steeredInto(e, t.inputID) {
			t.steered, t.turnID = true, e.TurnID
		}
		return !t.steered
	}, nil)
}

// leaveTurn is how a follower stopped by a signal leaves the turn t it
// follows, whose log it has read up to from. Ctrl-C cancels that turn in
// its owner (session/cancel through the owner's inbox; stop_reason
// cancelled, never continued) and waits, briefly, for it to end. SIGTERM
// shuts a detached owner down as a machine's shutdown would (turn_ended
// shutdown, continued once by the next command); an owner in the
// foreground of another command is left alone.
func leaveTurn(ctx context.Context, job Job, t *inputTurn, from int64) error {
	h, id := job.Home, job.SessionID
	if t.ended {
		return t.err(id)
	}
	if interruption(ctx) == ErrShutdown {
		if s, err := h.LoadSession(id); err == nil && s.OwnerDetached && s.OwnerPID > 0 {
			if alive, _ := h.OwnerAlive(id); alive && terminate(s.OwnerPID) == nil {
				// A second signal here is the owner's second one too: it
				// kills the agent at once and leaves the turn for repair.
				awaitTurnEnd(job, t, from, func() { _ = terminate(s.OwnerPID) })
				// And the command ends after its owner did, as when it owned
				// the turn: status then says the turn needs resuming.
				awaitOwnerExit(h, id, 10*time.Second)
				return fmt.Errorf("%w: the turn was interrupted (SIGTERM); kandev resume %s continues it", ErrShutdown, id)
			}
		}
		return fmt.Errorf("%w: stopped following; session %s goes on in its owner (kandev attach %s)", ErrShutdown, id, id)
	}
	if alive, _ := h.OwnerAlive(id); alive {
		joinedSince(h.LogPath(id), from, t)
		forInput := t.inputID
		if t.steered {
			forInput = "" // its message joined turnID: that turn is its to cancel
		}
		if err := h.Enqueue(id, &state.Input{Kind: state.InputCancel, From: state.FromFollower, ForInput: forInput, ForTurn: t.turnID, ForFollowUpOf: t.followUpOf}); err != nil {
			return err
		}
		awaitTurnEnd(job, t, from, nil)
		// As at a turn's normal end: the command exits once the record
		// says so too, so a status right after it shows the turn ended.
		settledSession(context.Background(), h, id, t)
	}
	return fmt.Errorf("%w: the turn was cancelled (Ctrl-C); kandev prompt %s \"...\" sends the next message", ErrInterrupted, id)
}

// awaitTurnEnd follows t from offset from until it ends, its owner exits
// or has nothing left to run for it (t.idle), the agent's cancel grace (and
// a little more) has passed, or a second signal aborts the wait. With
// again, a second signal is passed on to the owner and the wait goes on,
// briefly, until that owner has stopped its agent and exited, so the
// command ends after the agent it stopped.
func awaitTurnEnd(job Job, t *inputTurn, from int64, again func()) {
	grace := time.Duration(job.Config.CancelGraceSeconds())*time.Second + 3*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	go func() {
		select {
		case <-job.Abort:
			if again == nil {
				cancel()
				return
			}
			again()
			select {
			case <-time.After(5 * time.Second):
				cancel()
			case <-ctx.Done():
			}
		case <-ctx.Done():
		}
	}()
	t.ask = nil // nothing more is asked: the cancel answers what waits
	_, _ = eventlog.Follow(ctx, job.Home.LogPath(job.SessionID), from, t.see, func() bool {
		alive, _ := job.Home.OwnerAlive(job.SessionID)
		return !alive || t.idle != nil && t.idle()
	})
}

// awaitOwnerExit waits, at most d, until no process holds id's owner lock.
func awaitOwnerExit(h *state.Home, id string, d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if alive, _ := h.OwnerAlive(id); !alive {
			return
		}
	}
}

// errInterruptedBy reports whether err ended a follow because ctx did.
func errInterruptedBy(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && !errors.Is(err, errOwnerGone)
}

// ProgressPrefix begins a progress line a detached owner writes to its
// owner.out; the command that started it shows the rest on its terminal.
const ProgressPrefix = "kandev progress: "

// progressRelay shows on job.Progress the progress lines that a detached
// owner writes to owner.out past an offset: when the file is written, and
// before each event the follower shows, so the steps come before what
// follows them.
type progressRelay struct {
	mu      sync.Mutex
	job     Job
	from    int64
	partial []byte
	done    chan struct{}
	stopped chan struct{}
}

// relayProgress starts relaying from offset from (nil when there is no
// terminal to show progress on).
func relayProgress(job Job, from int64) *progressRelay {
	if job.Progress == nil {
		return nil
	}
	r := &progressRelay{job: job, from: from, done: make(chan struct{}), stopped: make(chan struct{})}
	changes := watch.WatchFiles(job.Home.OwnerOutPath(job.SessionID))
	go func() {
		defer close(r.stopped)
		defer changes.Close()
		tick := time.NewTicker(100 * time.Millisecond) // where the OS gives no notifications
		defer tick.Stop()
		for {
			r.poll()
			select {
			case <-r.done:
				return
			case <-changes.C():
			case <-tick.C:
			}
		}
	}()
	return r
}

// poll shows the complete progress lines written since the last poll.
func (r *progressRelay) poll() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.Open(r.job.Home.OwnerOutPath(r.job.SessionID))
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(r.from, io.SeekStart); err != nil {
		return
	}
	b, _ := io.ReadAll(f)
	r.from += int64(len(b))
	r.partial = append(r.partial, b...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			return
		}
		if line, ok := bytes.CutPrefix(r.partial[:i], []byte(ProgressPrefix)); ok {
			r.job.Progress(string(line))
		}
		r.partial = r.partial[i+1:]
	}
}

// stop ends the relay after a last poll.
func (r *progressRelay) stop() {
	if r == nil {
		return
	}
	close(r.done)
	<-r.stopped
	r.poll()
}

// sayQueued tells the person that the prompt just queued waits behind a
// turn the live owner runs for someone else, or, with --steer, that it
// joins that turn; where the agent does not steer, that it queues instead
// (a warning, shown without a terminal too: the person asked to steer).
func sayQueued(job Job) {
	s, err := job.Home.LoadSession(job.SessionID)
	if alive, _ := job.Home.OwnerAlive(job.SessionID); err != nil || !alive || s.CurrentTurn == "" {
		return
	}
	queued := "queued behind the running turn in " + job.SessionID
	switch {
	case job.Queued.Steer && acp.SteeringAdvertised(s.Capabilities):
		if job.Progress != nil {
			job.Progress("steering the running turn in " + job.SessionID)
		}
	case job.Queued.Steer && job.Warn != nil:
		job.Warn(fmt.Sprintf("%s: agent %s does not offer steering, so --steer sends the prompt as the next turn", queued, s.Agent))
	case job.Progress != nil:
		job.Progress(queued)
	}
}
