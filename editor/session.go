package editor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// session is one kandev session opened on the editor's connection.
type session struct {
	id  string
	srv *server

	turn sync.Mutex // one prompt at a time, as ACP requires

	mu  sync.Mutex
	own *localOwner // this process's warm owner; nil or done when none

	emitMu sync.Mutex
	// lastSetup is offered, read where emitMu may be held (published.go).
	lastSetup atomic.Pointer[acp.AgentSetup]
	shown     *updates // what the live stream has announced (under emitMu)
	// The agent's setup as this process's owner last reported it, and the
	// mode and options the editor was last shown (under emitMu; setup.go).
	offered                 acp.AgentSetup
	haveOffered             bool
	shownMode, shownOptions string
}

// localOwner is this process running the session's owner (owner.Dial,
// FollowsServe) with the agent kept warm between prompts: the owner asks
// for its next prompt through Next, and the editor's prompts answer it.
type localOwner struct {
	prompts  chan string
	quit     chan struct{} // closed: Next answers "no more", the owner ends
	restored chan struct{} // closed once the agent is restored (agent_started logged)
	ready    chan struct{} // closed at the first Next: restored, follow-ups served, idle
	done     chan struct{} // closed when owner.Dial returned
	err      error         // owner.Dial's error, once done
	ended    chan string   // stop reason of the editor's turn

	quitOnce, readyOnce, restoredOnce sync.Once
	claim                             turnClaim   // which turn is the editor's (under session.emitMu)
	asked                             atomic.Bool // an editor prompt was handed over and has not ended
}

func (o *localOwner) next() (string, bool) {
	o.readyOnce.Do(func() { close(o.ready) })
	select {
	case text := <-o.prompts:
		return text, true
	case <-o.quit:
		return "", false
	}
}

func (o *localOwner) stop() { o.quitOnce.Do(func() { close(o.quit) }) }

func (o *localOwner) finished() bool {
	select {
	case <-o.done:
		return true
	default:
		return false
	}
}

// restore makes this process the session's owner: the agent is launched
// and restored by the ladder, an interrupted turn is repaired and continued
// once, queued inputs are served. It returns once the agent is restored:
// the continuation runs after it, shown to the editor as it is logged, and
// a prompt sent meanwhile waits behind it (an editor's load or resume is
// answered in the time the agent takes to start, not in the time a
// continuation takes). When another kandev process owns the session
// already, there is nothing to restore here: prompts go to its inbox. A
// session kandev will not restore on its own (continuation paused for an
// operator, a broken worktree) is not an error yet: the editor is told why,
// and the next prompt decides, as it does in a shell.
func (s *session) restore() error {
	o, _ := s.warmOwner("")
	err := o.restoredOrEnded()
	var refused *owner.NotResumableError
	switch {
	case errors.Is(err, state.ErrOwnerBusy):
		return nil
	case errors.As(err, &refused):
		s.send([]sdk.SessionUpdate{sdk.UpdateAgentMessageText("kandev: " + err.Error() + "\n")})
		return nil
	}
	return err
}

// warmOwner returns this process's owner of the session, starting one when
// there is none. A new owner given a first prompt runs it as its job's
// Prompt (as kandev prompt would: it takes over a paused continuation),
// and that prompt is handed over from the start. started says a new owner
// took first.
func (s *session) warmOwner(first string) (o *localOwner, started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own != nil && !s.own.finished() {
		return s.own, false
	}
	o = &localOwner{prompts: make(chan string), quit: make(chan struct{}), restored: make(chan struct{}),
		ready: make(chan struct{}), done: make(chan struct{}), ended: make(chan string, 1)}
	s.own = o
	job, err := s.srv.opts.Job(s.id)
	if err != nil {
		o.err = err
		close(o.done)
		return o, true
	}
	job.Prompt = first
	job.Next, job.Emit, job.Ask, job.AskOption, job.Progress = o.next, s.emitFor(o), nil, s.askOption, nil
	job.Offered = s.offeredBy
	job.Warn = func(msg string) { s.srv.logf("%s", msg) }
	s.emitMu.Lock()
	s.shown = s.updatesFor(false)
	if first != "" {
		o.claim.handOver()
	}
	s.emitMu.Unlock()
	go func() {
		_, o.err = owner.Dial(s.srv.opts.Ctx, job, owner.Request{Follows: owner.FollowsServe})
		close(o.done)
	}()
	return o, true
}

// idle waits until the owner has restored the agent, sent what it owed
// (a continuation, a re-send, queued inputs) and waits for a prompt.
func (o *localOwner) idle() error {
	select {
	case <-o.ready:
		return nil
	case <-o.done:
		return ownerEnded(o.err)
	}
}

// restoredOrEnded waits until the owner has restored the agent, or ended.
func (o *localOwner) restoredOrEnded() error {
	select {
	case <-o.restored:
		return nil
	case <-o.ready:
		return nil
	case <-o.done:
		select {
		case <-o.restored:
			return nil
		default:
			return ownerEnded(o.err)
		}
	}
}

// prompt runs the editor's turn in this process's owner, or, when another
// process owns the session, through that owner's inbox (owner.Dial, which
// also takes over if that owner dies first). Its answer is the end of the
// turn that carries this prompt, never of a turn the owner ran for its own
// reasons (turnClaim).
func (s *session) prompt(text string) (sdk.PromptResponse, error) {
	s.turn.Lock()
	defer s.turn.Unlock()
	h := s.srv.opts.Home
	if err := h.CheckLease(s.id, s.srv.opts.Holder, time.Now()); err != nil {
		return sdk.PromptResponse{}, err
	}
	nameAfter(h, s.id, text)
	o, handed, err := s.ownerFor(text)
	if errors.Is(err, state.ErrOwnerBusy) {
		return s.deliver(text)
	}
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	o.asked.Store(true)
	defer o.asked.Store(false)
	if !handed {
		if err := s.handOver(o, text); err != nil {
			return sdk.PromptResponse{}, err
		}
	}
	resp, err := o.turnEnd()
	if handed && errors.Is(err, state.ErrOwnerBusy) {
		return s.deliver(text) // another process became the owner first
	}
	return resp, err
}

// ownerFor returns this process's owner ready for the editor's prompt. A
// new owner first restores and sends what it owes for an interrupted turn
// (its continuation, or its re-send) as turns of its own; the prompt is
// handed over once it is idle. A session the owner will not restore on its
// own (continuation paused, or stopped with kandev stop) needs the prompt
// to go on, as kandev prompt's does: the owner is started with it (handed),
// and then it has no follow-up to send before it.
func (s *session) ownerFor(text string) (o *localOwner, handed bool, err error) {
	if rec, err := s.srv.opts.Home.LoadSession(s.id); err == nil && rec.Stopped {
		if o, started := s.warmOwner(text); started {
			return o, true, nil
		}
	}
	o, started := s.warmOwner("")
	err = o.idle()
	var refused *owner.NotResumableError
	if started && errors.As(err, &refused) {
		o, _ = s.warmOwner(text)
		return o, true, nil
	}
	return o, false, err
}

// handOver gives the idle owner the editor's prompt.
func (s *session) handOver(o *localOwner, text string) error {
	s.emitMu.Lock()
	o.claim.handOver()
	s.emitMu.Unlock()
	select {
	case o.prompts <- text:
		return nil
	case <-o.done:
		s.emitMu.Lock()
		o.claim.withdraw()
		s.emitMu.Unlock()
		return ownerEnded(o.err)
	}
}

// turnEnd waits for the end of the editor's turn. A turn the owner ended
// before exiting (the session closed, the editor gone) still answers with
// its own stop reason.
func (o *localOwner) turnEnd() (sdk.PromptResponse, error) {
	var stop string
	select {
	case stop = <-o.ended:
	case <-o.done:
		select {
		case stop = <-o.ended:
		default:
			return sdk.PromptResponse{}, ownerEnded(o.err)
		}
	}
	if r, ok := acpStop(stop); ok {
		return sdk.PromptResponse{StopReason: r}, nil
	}
	<-o.done // a failed turn ends the owner; its error says why
	return sdk.PromptResponse{}, ownerEnded(o.err)
}

// deliver queues the prompt for the process that owns the session and
// follows its turn, showing its events here.
func (s *session) deliver(text string) (sdk.PromptResponse, error) {
	job, err := s.srv.opts.Job(s.id)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	shown := s.updatesFor(false)
	var mine lastUserTurn
	source := ""
	job.Prompt, job.Ask, job.AskOption, job.Progress = text, nil, s.askOption, nil
	job.Emit = func(e eventlog.Event) {
		mine.see(e)
		if e.Type == eventlog.EventTurnStarted {
			source = e.Source
		}
		if e.Type == eventlog.EventUserMessage && source != eventlog.SourceContinuation {
			return // the editor shows its own prompt (a continuation is kandev's, shown)
		}
		s.send(shown.of(e))
	}
	d, err := owner.Dial(s.srv.opts.Ctx, job, owner.Request{Follows: owner.FollowsInput})
	stop := ""
	if d != nil && d.Result != nil {
		// Followed through the inbox, only the input's own turn is seen; run
		// here, the result's is the last turn run, maybe a queued input's.
		stop = d.Result.StopReason
		if !d.Queued && mine.stop != "" {
			stop = mine.stop
		}
	}
	// A cancelled turn is an interruption for a command (exit 130), and an
	// answer with stopReason cancelled for the editor.
	if err != nil && !(errors.Is(err, owner.ErrInterrupted) && (stop == eventlog.StopCancelled || stop == eventlog.StopUserCanceled)) {
		return sdk.PromptResponse{}, err
	}
	if r, ok := acpStop(stop); ok {
		return sdk.PromptResponse{StopReason: r}, nil
	}
	return sdk.PromptResponse{}, fmt.Errorf("the turn ended with %s; see kandev events %s", stop, s.id)
}

// emitFor shows the owner's logged events to the editor, notes when the
// agent is restored and when the editor's own turn ends.
func (s *session) emitFor(o *localOwner) func(eventlog.Event) {
	return func(e eventlog.Event) {
		s.emitMu.Lock()
		defer s.emitMu.Unlock()
		if e.Type == eventlog.EventAgentStarted {
			o.restoredOnce.Do(func() { close(o.restored) })
		}
		stop, ended := o.claim.see(e)
		ups := s.shown.of(e)
		ups = slices.DeleteFunc(ups, s.shownAlready)
		s.send(ups)
		if ended {
			select {
			case o.ended <- stop:
			default: // cannot happen: one claimed turn at a time, each answer taken
			}
		}
	}
}

// send writes notifications to the editor. An editor that went away cannot
// be shown anything; the turn goes on regardless.
func (s *session) send(ups []sdk.SessionUpdate) {
	for _, u := range ups {
		_ = s.srv.client().SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: s.shownUpdate(u)})
	}
}

// askOption forwards the agent's permission request to the editor and
// returns the option the editor chose, as it chose it (its "allow always"
// reaches the agent as the agent's allow_always option). No answer (the
// editor went away, or it cancelled the request) is "": a denial.
func (s *session) askOption(req sdk.RequestPermissionRequest) string {
	req.SessionId = sdk.SessionId(s.id)
	resp, err := s.srv.client().RequestPermission(s.srv.opts.Ctx, req)
	if err != nil || resp.Outcome.Selected == nil {
		return ""
	}
	return string(resp.Outcome.Selected.OptionId)
}

// cancel asks the owner, in whatever process it runs, to cancel the running
// turn; with no live owner there is nothing to cancel.
func (s *session) cancel() {
	job := owner.Job{Home: s.srv.opts.Home, SessionID: s.id}
	if _, err := owner.Dial(s.srv.opts.Ctx, job, owner.Request{Follows: owner.FollowsControl, Control: &state.Input{Kind: state.InputCancel, From: state.FromEditor}}); err != nil {
		s.srv.logf("cannot cancel the turn of session %s: %v", s.id, err)
	}
}

// close cancels the editor's running turn, if any, and releases the agent.
// A turn another process runs is not the editor's to cancel.
func (s *session) close() {
	s.mu.Lock()
	o := s.own
	s.mu.Unlock()
	if o == nil {
		return
	}
	if o.asked.Load() {
		s.cancel()
	}
	s.release()
}

// release ends this process's owner once its running turn (if any) is over.
func (s *session) release() {
	s.mu.Lock()
	o := s.own
	s.mu.Unlock()
	if o == nil {
		return
	}
	o.stop()
	<-o.done
}

// acpStop maps a kandev stop reason to the ACP one a prompt answers with;
// ok is false for a turn that failed (the agent died or erred).
func acpStop(stop string) (sdk.StopReason, bool) {
	switch stop {
	case eventlog.StopUserCanceled, eventlog.StopShutdown, string(sdk.StopReasonCancelled):
		return sdk.StopReasonCancelled, true
	case string(sdk.StopReasonEndTurn), string(sdk.StopReasonMaxTokens), string(sdk.StopReasonMaxTurnRequests), string(sdk.StopReasonRefusal):
		return sdk.StopReason(stop), true
	}
	return "", false
}

func ownerEnded(err error) error {
	if err == nil {
		return errors.New("the session's owner ended before the turn did; see kandev status")
	}
	return err
}

// nameAfter gives a session without a title the start of its first prompt.
func nameAfter(h *state.Home, id, text string) {
	s, err := h.LoadSession(id)
	if err != nil || s.Title != "" {
		return
	}
	_, _ = h.UpdateSession(id, func(s *state.Session) error {
		if s.Title == "" {
			s.Title = owner.TitleOf(history.Redact(text))
		}
		return nil
	})
}
