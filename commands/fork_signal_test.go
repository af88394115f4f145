package commands

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// forkableParent is a home with one idle session that has one finished turn.
func forkableParent(t *testing.T) (*state.Home, string) {
	t.Helper()
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	s := &state.Session{ID: state.NewID(now), Cwd: t.TempDir(), Agent: acp.DemoProfile, State: state.StateWaitingForInput,
		CreatedAt: now, LastActivityAt: now, Title: "parent", Turns: 1}
	s.TaskID = s.ID
	if err := h.CreateSession(s); err != nil {
		t.Fatal(err)
	}
	log, _, err := h.OpenLog(s.ID, eventlog.OpenLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := log.AppendSync(&eventlog.Event{Type: eventlog.EventTurnStarted, TurnID: "t1", Source: eventlog.SourceInitial},
		&eventlog.Event{Type: eventlog.EventUserMessage, TurnID: "t1", Role: "user", Content: "remember FIG"},
		&eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: "t1", Role: "agent", Content: "OK"},
		&eventlog.Event{Type: eventlog.EventTurnEnded, TurnID: "t1", StopReason: eventlog.StopEndTurn}); err != nil {
		t.Fatal(err)
	}
	return h, s.ID
}

func TestFork_ASignalBeforeTheChildExistsCreatesNothing(t *testing.T) {
	for _, cause := range []error{owner.ErrShutdown, owner.ErrInterrupted} {
		t.Run(cause.Error(), func(t *testing.T) {
			h, id := forkableParent(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(cause)
			var out, errb bytes.Buffer
			env := &Env{G: &Globals{Home: h.Dir}, Out: &Output{Out: &out, Err: &errb}, Ctx: ctx, Now: time.Now}
			err := (&forkCmd{SessionRef: SessionRef{ID: id}, At: -1}).Run(env)
			want := ExitTerminated
			if cause == owner.ErrInterrupted {
				want = ExitInterrupted
			}
			if !errors.Is(err, cause) || ExitCode(err) != want || env.committed {
				t.Fatalf("err = %v (exit %d, committed %v); want exit %d", err, ExitCode(err), env.committed, want)
			}
			if all, _ := h.ListSessions(); len(all) != 1 {
				t.Fatalf("%d sessions after a fork stopped before it began, want 1", len(all))
			}
		})
	}
}

func TestFork_AForkThatCreatedItsChildIsCommitted(t *testing.T) {
	h, id := forkableParent(t)
	var out, errb bytes.Buffer
	env := &Env{G: &Globals{Home: h.Dir}, Out: &Output{Out: &out, Err: &errb}, Ctx: context.Background(), Now: time.Now}
	if err := (&forkCmd{SessionRef: SessionRef{ID: id}, At: -1}).Run(env); err != nil || !env.committed {
		t.Fatalf("err = %v, committed %v", err, env.committed)
	}
}
