package owner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// runInBackground runs an owner until it returns; the result arrives on the channel.
func (r *rig) runInBackground(job Job) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := run(context.Background(), job)
		done <- err
	}()
	return done
}

// waitRecord waits until the session's record satisfies ok.
func (r *rig) waitRecord(id string, what string, ok func(*state.Session) bool) {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok(r.session(id)) {
		if time.Now().After(deadline) {
			r.t.Fatalf("the record of %s never showed %s: %+v", id, what, r.session(id))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *rig) enqueue(id string, in state.Input) {
	r.t.Helper()
	if err := r.home.Enqueue(id, &in); err != nil {
		r.t.Fatal(err)
	}
}

func TestOwner_LingerServesWhatArrivesWithTheSameAgentUntilClosed(t *testing.T) {
	r := newRig(t)
	id := r.create("remember plum")
	job := r.job(id, "")
	job.Linger = time.Hour
	done := r.runInBackground(job)
	r.waitRecord(id, "warm_until", func(s *state.Session) bool { return s.WarmUntil != nil })
	r.enqueue(id, state.Input{Kind: state.InputPrompt, Text: "recall"})
	r.waitRecord(id, "the queued turn served", func(s *state.Session) bool { return s.Turns == 2 && s.CurrentTurn == "" && s.WarmUntil != nil })
	r.enqueue(id, state.Input{Kind: state.InputClose})
	if err := <-done; err != nil {
		t.Fatalf("owner: %v", err)
	}
	if len(r.agents) != 1 {
		t.Fatalf("%d agents launched, want 1: the queued prompt is served warm", len(r.agents))
	}
	if s := r.session(id); s.WarmUntil != nil || s.AgentPID != 0 {
		t.Fatalf("after close: warm_until %v, agent pid %d", s.WarmUntil, s.AgentPID)
	}
	if got := lastAgentText(r.events(id), "t2"); got != "You asked me to remember: plum." {
		t.Fatalf("queued turn answered %q", got)
	}
}

func TestOwner_DeferParksARequestUntilItIsAnswered(t *testing.T) {
	cases := []struct {
		answer  string
		written bool
	}{{state.InputApprove, true}, {state.InputDeny, false}}
	r := newRig(t)
	for _, tc := range cases {
		t.Run(tc.answer, func(t *testing.T) {
			id := r.create("/write f.txt hello")
			job := r.job(id, "")
			job.Permissions = PermDefer
			done := r.runInBackground(job)
			r.waitRecord(id, "a parked request", func(s *state.Session) bool { return len(s.ParkedRequests) == 1 })
			rid := r.session(id).ParkedRequests[0].ID
			// An answer that names no request, or another one, applies to nothing.
			r.enqueue(id, state.Input{Kind: state.InputApprove})
			r.enqueue(id, state.Input{Kind: state.InputApprove, RequestID: "rq-other"})
			time.Sleep(300 * time.Millisecond)
			if s := r.session(id); len(s.ParkedRequests) != 1 {
				t.Fatalf("an answer for no request or another one was applied: %+v", s.ParkedRequests)
			}
			r.enqueue(id, state.Input{Kind: tc.answer, RequestID: rid})
			if err := <-done; err != nil {
				t.Fatalf("owner: %v", err)
			}
			_, err := os.Stat(filepath.Join(r.session(id).Cwd, "f.txt"))
			if written := err == nil; written != tc.written {
				t.Fatalf("after %s the file written is %v", tc.answer, written)
			}
			for _, e := range r.events(id) {
				if e.Type == eventlog.EventPermissionRequest && (!e.Deferred || e.RequestID != rid) {
					t.Fatalf("the parked request is not marked deferred with its id %s: %+v", rid, e)
				}
				if e.Type == eventlog.EventPermissionResolved && (e.RequestID != rid || !strings.Contains(string(e.Data), `"answered_by":"in-`)) {
					t.Fatalf("the resolution does not name its request and answer: %+v %s", e, e.Data)
				}
			}
			if s := r.session(id); len(s.ParkedRequests) != 0 || s.PermissionPending {
				t.Fatalf("the record still lists a parked request: %+v", s.ParkedRequests)
			}
		})
	}
}
