package owner

import (
	"time"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// shutdown stops the agent and records its exit; an abort kills its
// process group at once.
//
// After a clean end (every turn done, no signal) the owner does not wait:
// the agent's supervisor stops it (handsOff) while this command returns,
// holding the session's agent lock until the agent's tree is gone, so the
// next owner's agent never runs beside it. Its agent_exited says so.
func (o *owner) shutdown(clean bool) {
	if o.proc == nil {
		return
	}
	o.cancelGivenUp()
	if h, ok := o.proc.(handsOff); ok && clean && h.StopAfterReturn(o.job.Profile.StopGrace()) {
		if o.conn != nil {
			o.conn.Barrier(nil)
		}
		pid, _ := o.proc.Identity()
		how := "stdin closed, a signal if it is still running after the grace"
		if !o.job.Profile.ExitOnEOF {
			how = "stdin closed and a signal at once: the profile says it ignores EOF"
		}
		o.logAgentExit(&eventlog.Event{Type: eventlog.EventAgentExited, PID: pid, Content: "stopped after the turn by its supervisor (" + how + ")"})
		o.update(func(s *state.Session) { s.AgentPID, s.AgentStart, s.OwnerPID = 0, "", 0 })
		return
	}
	stopped := make(chan struct{})
	go func() {
		o.proc.Stop(o.job.Profile.StopGrace())
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-o.job.Abort:
		o.proc.Kill()
	}
	if o.conn != nil {
		o.conn.Barrier(nil)
	}
	pid, _ := o.proc.Identity()
	o.logAgentExit(&eventlog.Event{Type: eventlog.EventAgentExited, PID: pid, Content: o.proc.ExitDescription()})
	o.update(func(s *state.Session) { s.AgentPID, s.AgentStart, s.OwnerPID = 0, "", 0 })
}

// cancelRequestWait bounds the wait for the $/cancel_request notifications
// of requests the owner gave up on (acp/cancel_request.go).
const cancelRequestWait = time.Second

// cancelGivenUp lets the $/cancel_request of every request the owner gave
// up on (a start-up or setup request past its timeout) reach the agent
// before it is stopped; not when a second signal asked to stop at once.
func (o *owner) cancelGivenUp() {
	if o.conn == nil {
		return
	}
	select {
	case <-o.job.Abort:
		return
	default:
	}
	o.conn.AwaitCancelRequests(cancelRequestWait)
}

// handsOff is an agent whose shutdown its supervisor can carry out after
// the owner has returned (unix); it reports false when it cannot.
type handsOff interface {
	StopAfterReturn(grace time.Duration) bool
}

// agentGoneWait bounds how long an owner waits for the previous agent of
// its session to finish stopping (grace, SIGTERM, the supervisor's kill).
const agentGoneWait = 6 * time.Second
