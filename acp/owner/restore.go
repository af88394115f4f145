package owner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// flagFastFail is how soon an agent launched with its resume flag must exit
// for kandev to relaunch it without the flag.
const flagFastFail = 2 * time.Second

// start launches the agent and restores the session's conversation: with
// the resume flag first when the plan says so, once more without it when
// the agent refuses the flag, then the restore ladder.
func (o *owner) start(ctx context.Context) error {
	if o.reattached {
		return nil // the agent never stopped (reattach.go): nothing to launch or restore
	}
	if err := o.launchAndRestore(ctx); err != nil {
		return err
	}
	applied := o.applySetup(ctx) // owner_setup.go: the recorded setup, applied again where the agent differs
	o.recordStarted(applied)
	if o.s.State == state.StateStarting {
		o.setState(state.StateWaitingForInput)
	}
	return nil
}

// recordStarted records agent_started: how the agent came back, what it
// is, and the setup applied to it.
func (o *owner) recordStarted(applied []string) {
	// What the agent sent before it answered (its commands, modes, a load's
	// replay) is in the log first, in the order it came, however busy the
	// recorder is: the log is the wire's order.
	o.conn.Barrier(nil)
	pid, _ := o.proc.Identity()
	data, _ := json.Marshal(map[string]any{"agent_info": o.agentInfo, "capabilities": o.agentCaps, "command": o.proc.CommandLine(), "replayed_updates": o.conn.Replayed(), "setup_applied": applied})
	// Durable at once unless a prompt is about to be sent: its prompt_sent's
	// fsync, a moment later, makes this line durable too.
	o.append(!o.promptFollows(), &eventlog.Event{Type: eventlog.EventAgentStarted, PID: pid, Restore: string(o.res.Restore), FallbackReason: o.res.FallbackReason, Data: data})
}

// launchAndRestore launches the agent (with the resume flag first when the
// plan says so, once more without it when the agent refuses the flag) and
// walks the restore ladder.
func (o *owner) launchAndRestore(ctx context.Context) error {
	o.stopLeftovers()
	flagRefused := false
	var fallback []string
	for {
		useFlag := o.plan.UseFlag && !flagRefused
		init, err := o.launch(ctx, useFlag)
		if err != nil && useFlag && o.proc != nil && o.proc.ExitedWithin(flagFastFail) {
			// The agent refused the resume flag: once more without it, with the resume context.
			fallback = append(fallback, "resume flag: agent "+o.proc.ExitDescription()+" within 2s")
			o.proc.Kill()
			o.conn = nil
			flagRefused = true
			if o.plan.OwesResumeContext(acp.RestoreNone, true) {
				o.update(func(s *state.Session) { s.PendingContext = true })
			}
			continue
		}
		if err != nil {
			return err
		}
		return o.restore(ctx, init, flagRefused, &fallback)
	}
}

// stopLeftovers stops the agent a previous owner did not clean up, and
// whatever that agent started.
func (o *owner) stopLeftovers() {
	if o.s.AgentPID == 0 {
		return
	}
	stale := acp.KillStale(o.s.AgentPID, o.s.AgentStart)
	n := 0
	if o.job.Home.AgentLeftoversPossible(o.s.ID) { // else its supervisor ended the tree: no process list to read
		n = acp.KillSessionLeftovers(o.job.Home.Dir, o.s.ID)
	}
	if stale || n > 0 {
		o.marker(history.MarkerSessionRecovered, fmt.Sprintf("Stopped agent process %d and %d process(es) it started, left running by a dead owner.", o.s.AgentPID, n), "")
	}
}

// launch starts the agent and performs initialize.
func (o *owner) launch(ctx context.Context, withFlag bool) (sdk.InitializeResponse, error) {
	p := o.job.Profile
	cmd := p.ResolvedCommand()
	if withFlag {
		for _, a := range p.ResumeFlag {
			cmd = append(cmd, strings.ReplaceAll(a, "{token}", o.s.ResumeToken))
		}
	}
	if o.conn == nil { // else reattach connected to a container's new agent
		o.progress("launching " + p.Name + " agent")
		launch := o.job.Launch
		if launch == nil {
			launch = acp.LaunchProcess
		}
		// The previous owner may have returned while its agent still stops
		// (EOF, grace, SIGTERM): never two agents of one session at once.
		if !o.job.Home.AwaitAgentGone(ctx, o.s.ID, agentGoneWait) && o.job.Warn != nil {
			o.job.Warn(fmt.Sprintf("the previous agent of session %s is still stopping after %s; starting a new one", o.s.ID, agentGoneWait))
		}
		proc, err := launch(o.launchSpec(cmd))
		if err != nil {
			o.failStart(err)
			if o.plan.FirstLaunch {
				return sdk.InitializeResponse{}, fmt.Errorf("%w: %w; session %s is FAILED", ErrAgentFailed, err, o.s.ID)
			}
			return sdk.InitializeResponse{}, fmt.Errorf("%w: %w", ErrAgentFailed, err)
		}
		o.connect(proc)
	}
	pid, start := o.proc.Identity()
	o.update(func(s *state.Session) {
		s.AgentLaunched = true
		s.AgentPID, s.AgentStart, s.OwnerPID = pid, start, ownPID
		s.AgentCommand = p.Command
		if s.State == state.StateCreated {
			s.State = state.StateStarting
		}
	})
	hctx, cancel := context.WithTimeout(ctx, o.handshakeTimeout())
	defer cancel()
	o.progress("initializing agent")
	init, err := o.conn.Initialize(hctx)
	if err != nil {
		return init, o.handshakeFailed(ctx, "initialize", err)
	}
	capsJSON, _ := json.Marshal(init)
	o.agentInfo, o.agentCaps = init.AgentInfo, init.AgentCapabilities
	o.update(func(s *state.Session) { s.Capabilities = capsJSON; s.AgentNew = false })
	return init, nil
}

// launchSpec is how the session's agent is launched with command.
func (o *owner) launchSpec(cmd []string) acp.LaunchSpec {
	p := o.job.Profile
	return acp.LaunchSpec{Command: cmd, Env: p.Env, Dir: o.s.Cwd, Home: o.job.Home.Dir, Hint: p.InstallHint, SessionID: o.s.ID, AgentLock: o.job.Home.AgentLockPath(o.s.ID)}
}

// connect makes proc the owner's agent and opens the ACP connection to it.
func (o *owner) connect(proc acp.Transport) {
	o.proc = proc
	known := o.knownChildren()
	o.knowChildren(known)
	o.conn = acp.Connect(proc, acp.ConnOptions{Cwd: o.s.Cwd, OnEvents: o.onEvents, Permission: o.permission, MCPServers: o.mcpServers(),
		AllowTerminal: o.terminalAllowed, Elicit: o.elicit, KnownChildren: known})
}

// progress reports a start-up step to the person (Job.Progress).
func (o *owner) progress(msg string) {
	if o.job.Progress != nil {
		o.job.Progress(msg)
	}
}

func (o *owner) handshakeTimeout() time.Duration {
	return time.Duration(o.job.Config.HandshakeTimeoutSeconds()) * time.Second
}

// restore walks the restore ladder from the plan's first step
// (NextRestoreStep after it) until a step works or one fails in a way that
// must keep the token.
func (o *owner) restore(ctx context.Context, init sdk.InitializeResponse, flagRefused bool, fallback *[]string) error {
	hctx, cancel := context.WithTimeout(ctx, o.handshakeTimeout())
	defer cancel()
	in := o.plan.Ladder
	in.Caps = acp.CapabilitiesOf(init)
	step := o.plan.FirstStep(in.Caps, flagRefused)
	var lastErr error
	for ; ; step = acp.NextRestoreStep(in) {
		if step == acp.RestoreFail {
			return o.handshakeFailed(ctx, "session/"+string(in.Prev), lastErr)
		}
		o.progress("restoring session (" + string(step) + ")")
		err := o.restoreStep(hctx, step)
		if err == nil {
			o.res.Restore = step
			o.res.FallbackReason = strings.Join(*fallback, "; ")
			return nil
		}
		if step == acp.RestoreNew || step == acp.RestoreFlag {
			return o.handshakeFailed(ctx, "session/new", err)
		}
		token := o.s.ResumeToken
		class := acp.ClassifyWithList(acp.Classify(err), in.Caps, func() (bool, error) { return o.conn.SessionListed(hctx, token) })
		*fallback = append(*fallback, fmt.Sprintf("session/%s: %s", step, acp.DescribeError(err)))
		if class == acp.ClassUnknownSession {
			o.forgetToken(err)
		}
		in.Prev, in.PrevErr, lastErr = step, class, err
	}
}

// restoreStep runs one rung of the ladder; a fresh session's token is
// stored, together with the resume context the plan owes after it.
func (o *owner) restoreStep(ctx context.Context, step acp.RestoreMethod) error {
	var tok string
	var err error
	switch step {
	case acp.RestoreResume:
		err = o.conn.ResumeSession(ctx, o.s.ResumeToken)
	case acp.RestoreLoad:
		err = o.conn.LoadSession(ctx, o.s.ResumeToken)
	case acp.RestoreNew, acp.RestoreFlag:
		tok, err = o.conn.NewSession(ctx)
	}
	if err != nil {
		return err
	}
	owes := o.plan.OwesResumeContext(step, false)
	if tok != "" || owes {
		o.update(func(s *state.Session) {
			if tok != "" {
				s.ResumeToken = tok
			}
			if owes {
				s.PendingContext = true
			}
		})
	}
	return nil
}

// forgetToken drops a token the agent no longer knows and says so.
func (o *owner) forgetToken(err error) {
	o.update(func(s *state.Session) { s.ResumeToken = "" })
	msg := "Previous agent session could not be restored (" + acp.DescribeError(err) + "); the next message starts a fresh agent session with the stored history."
	if o.s.Turns == 0 {
		msg = "Previous agent session could not be restored (" + acp.DescribeError(err) + "); it had no history, so a fresh agent session takes its place."
	}
	o.marker(history.MarkerResumeFailed, msg, "")
}

// failStart records a launch that never produced an agent. The marker is
// written, not shown: the command's error line says the same once. A
// session whose agent never started before ends FAILED; one that worked
// before keeps its state (and token), so the user can retry.
func (o *owner) failStart(err error) {
	m := history.NewMarker(history.MarkerAgentFailure, "Could not launch the agent: "+err.Error(), "")
	evs := []*eventlog.Event{&m}
	first := o.plan.FirstLaunch
	if first {
		evs = append(evs, &eventlog.Event{Type: eventlog.EventState, State: state.StateFailed})
	}
	o.record(evs...)
	o.update(func(s *state.Session) {
		s.ErrorMessage = history.Redact(err.Error())
		switch {
		case first:
			s.State = state.StateFailed
		case s.State == state.StateCreated || s.State == state.StateStarting:
			s.State = state.StateWaitingForInput
		}
	})
}

// handshakeFailed ends a start-up that the agent did not complete: the
// token is kept so the user can retry.
func (o *owner) handshakeFailed(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		return interruption(ctx)
	}
	msg := fmt.Sprintf("agent %s failed during %s: %s", o.job.Profile.Name, step, acp.DescribeError(err))
	if acp.Classify(err) == acp.ClassTimeout {
		msg = fmt.Sprintf("agent %s did not answer %s within %ds (it may be hung)", o.job.Profile.Name, step, o.job.Config.HandshakeTimeoutSeconds())
	}
	o.failStart(errors.New(msg))
	if o.plan.FirstLaunch {
		return fmt.Errorf("%w: %s; session %s is FAILED (fix the agent, then kandev start again)", ErrAgentFailed, msg, o.s.ID)
	}
	return fmt.Errorf("%w: %s; the session keeps its state, retry with kandev resume %s", ErrAgentFailed, msg, o.s.ID)
}

// promptFollows says whether this owner sends a prompt right after the
// agent is started: the first prompt of a new session, or the one it was given.
func (o *owner) promptFollows() bool {
	return o.plan.Initial != "" || o.plan.SendPrompt
}
