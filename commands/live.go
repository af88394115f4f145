package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// serveCmd is the detached owner that start, prompt and resume launch
// when a session lingers or defers permissions. Its output goes to the
// session's owner.out; users never run it.
type serveCmd struct {
	ID         string        `arg:""`
	Linger     time.Duration `default:"0s"`
	NoContinue bool
	// Offline: run a travelling session's turns here when its remote does
	// not answer (the caller's --offline).
	Offline bool
	// Asker (PID:START) is the command that starts it and asks, on its
	// terminal, about the ask-mode requests of this owner's first turns.
	Asker string
	// Input is the queued prompt it was started for (its caller's).
	Input string
	// PromptStdin: stdin carries the initial prompt as typed.
	PromptStdin bool
	// Agent and Runtime are the session's, as its caller read them (they
	// never change): the owner then reads the record once, under its lock.
	// Without Agent (an older caller) the record is read here first.
	Agent   string
	Runtime string
}

// Run owns the session until it has nothing to serve and its linger ran
// out (owner.Dial: this process is the owner).
func (c *serveCmd) Run(env *Env) error {
	h, err := env.Home()
	if err != nil {
		return err
	}
	asker, err := parseAsker(c.Asker)
	if err != nil {
		return err
	}
	job := owner.Job{Linger: c.Linger, NoContinue: c.NoContinue, Offline: c.Offline, Asker: asker, OwnInput: c.Input, Detached: true, Emit: func(eventlog.Event) {}}
	if c.PromptStdin {
		b, err := io.ReadAll(env.Stdin)
		if err != nil {
			return err
		}
		job.InitialPrompt = string(b)
	}
	// An older kandev handed the prompt over in this file: it must not stay.
	os.Remove(h.PromptHandoffPath(c.ID))
	if c.Agent != "" {
		job, err = serveJob(env, c.ID, c.Agent, c.Runtime, job)
	} else {
		job, err = ownerJob(env, c.ID, job)
	}
	if err != nil {
		return err
	}
	job.Ask, job.AskParked, job.Warn = nil, nil, func(msg string) { fmt.Fprintln(os.Stderr, "kandev:", msg) }
	// Its caller shows these on its terminal (owner.ProgressPrefix).
	job.Progress = func(msg string) { fmt.Fprintln(os.Stderr, owner.ProgressPrefix+msg) }
	_, err = owner.Dial(env.Ctx, job, owner.Request{Follows: owner.FollowsServe})
	return err
}

// serveJob is ownerJob for a detached owner told its session's agent and
// runtime: the record is not read here (the owner checks it is resumable
// and trusted under its lock).
func serveJob(env *Env, id, agent, runtime string, job owner.Job) (owner.Job, error) {
	if err := state.ValidateID(id); err != nil {
		return job, err
	}
	h, err := env.Home()
	if err != nil {
		return job, err
	}
	cfg, err := env.Config()
	if err != nil {
		return job, err
	}
	mode, err := env.PermissionMode()
	if err != nil {
		return job, err
	}
	profile, err := acp.LookupProfile(cfg, agent)
	if err != nil {
		return job, err
	}
	return launchJob(env, h, cfg, id, profile, mode, runtime, job), nil
}

// closeCmd is kandev close.
type closeCmd struct {
	SessionRef
	Now bool `help:"Cancel a running turn instead of letting it finish."`
	All bool `help:"End every live owner of the home (every warm agent), not one session's."`
}

// Help shows an example.
func (c *closeCmd) Help() string {
	return "Example:\n  kandev close 20261130-0915 --now\n  kandev close --all"
}

// Run ends the session's live owner and waits until it has exited.
func (c *closeCmd) Run(env *Env) error {
	if c.All {
		return c.closeAll(env)
	}
	h, id, err := c.pick(env, needLive)
	if errors.Is(err, errNoneEligible) {
		// Nothing lingers here: as with an id, there is nothing to close.
		env.Out.Object(closeOutput{}, func(w io.Writer) {
			fmt.Fprintln(w, "nothing to close: no kandev process is running a session here")
		})
		return nil
	}
	if err != nil {
		return err
	}
	closed := false
	d, err := owner.Dial(env.Ctx, owner.Job{Home: h, SessionID: id}, owner.Request{Follows: owner.FollowsControl, Control: &state.Input{Kind: state.InputClose, Now: c.Now}})
	if err != nil {
		return err
	}
	if d.Queued {
		if err := waitOwnerGone(env, h, id); err != nil {
			return err
		}
		closed = true
	}
	if stoppedContainers(env, h, []string{id}) > 0 {
		closed = true
	}
	unscheduled, err := cancelLimitSchedule(h, id)
	if err != nil {
		env.Out.Warn(err.Error())
	}
	env.Out.Object(closeOutput{SessionID: id, Closed: closed, Unscheduled: &unscheduled}, func(w io.Writer) {
		if unscheduled {
			fmt.Fprintf(w, "cancelled the kandev recover scheduled for the usage limit's reset\n")
		}
		if !closed {
			fmt.Fprintf(w, "nothing to close: no kandev process is running session %s\n", id)
			return
		}
		fmt.Fprintf(w, "session %s closed; its agent is stopped and the next prompt restores it\n", id)
	})
	return nil
}

// closeAll ends every live owner of the home at once and waits for them
// all (and their agents) to be gone.
func (c *closeCmd) closeAll(env *Env) error {
	if c.ID != "" || c.Latest {
		return usagef("close --all ends every live owner of the home: name no session with it")
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	ids := owner.LiveSessions(h)
	for _, id := range ids {
		if _, err := owner.Dial(env.Ctx, owner.Job{Home: h, SessionID: id}, owner.Request{Follows: owner.FollowsControl, Control: &state.Input{Kind: state.InputClose, Now: c.Now}}); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if err := waitOwnerGone(env, h, id); err != nil {
			return err
		}
	}
	all, _ := h.ListSessions()
	var rest []string
	for _, s := range all {
		if !slices.Contains(ids, s.ID) {
			rest = append(rest, s.ID)
		}
	}
	stoppedContainers(env, h, rest)
	env.Out.Object(closeAllOutput{Closed: append([]string{}, ids...)}, func(w io.Writer) {
		if len(ids) == 0 {
			fmt.Fprintln(w, "nothing to close: no kandev process is running a session in this home")
			return
		}
		for _, id := range ids {
			fmt.Fprintf(w, "session %s closed\n", id)
		}
		fmt.Fprintf(w, "%d owner(s) closed; their agents are stopped and the next prompt restores each\n", len(ids))
	})
	return nil
}

// waitOwnerGone waits for the owner of id and its agent to be gone.
func waitOwnerGone(env *Env, h *state.Home, id string) error {
	return owner.AwaitOwnerGone(env.Ctx, h, id)
}

// approveCmd is kandev approve.
type approveCmd struct {
	SessionRef
	Always  bool   `help:"Pick the agent's \"always allow\" option when it offers one."`
	Request string `help:"The parked request to answer (its request_id; default: the oldest)." placeholder:"RID"`
}

// Help shows an example.
func (c *approveCmd) Help() string {
	return "Example:\n  kandev approve 20261130-0915\n  kandev approve 20261130-0915 --request rq-3f2a9c1d"
}

// Run answers the parked permission request with allow.
func (c *approveCmd) Run(env *Env) error {
	return answer(env, c.SessionRef, c.Request, &state.Input{Kind: state.InputApprove, Always: c.Always})
}

// denyCmd is kandev deny.
type denyCmd struct {
	SessionRef
	Request string `help:"The parked request to answer (its request_id; default: the oldest)." placeholder:"RID"`
}

// Help shows an example.
func (c *denyCmd) Help() string { return "Example:\n  kandev deny 20261130-0915" }

// Run answers the parked permission request with reject.
func (c *denyCmd) Run(env *Env) error {
	return answer(env, c.SessionRef, c.Request, &state.Input{Kind: state.InputDeny})
}

// answerCmd is kandev answer.
type answerCmd struct {
	SessionRef
	Request string   `help:"The parked question to answer (its request_id; default: the oldest)." placeholder:"RID"`
	Value   []string `arg:"" optional:"" help:"The answer: the value of the question's one field, or a JSON object of its fields."`
}

// Help shows an example.
func (c *answerCmd) Help() string {
	return "Example:\n  kandev answer 20261130-0915 blue\n  kandev answer 20261130-0915 --request rq-3f2a9c1d '{\"color\": \"blue\", \"count\": 2}'"
}

// Run answers the parked question with VALUE.
func (c *answerCmd) Run(env *Env) error {
	ref, value := c.SessionRef, c.Value
	if ref.Latest && len(value) == 0 && ref.ID != "" {
		ref.ID, value = "", []string{ref.ID} // kandev answer --latest VALUE
	}
	if len(value) == 0 {
		return usagef("kandev answer needs the answer: kandev answer ID VALUE (kandev deny ID declines the question)")
	}
	return answer(env, ref, c.Request, &state.Input{Kind: state.InputAnswer, Text: strings.Join(value, " ")})
}

// answerable keeps the parked requests an input of kind can answer: a
// question takes kandev answer or deny, a permission request approve or deny.
func answerable(parked []state.ParkedRequest, kind string) []state.ParkedRequest {
	var out []state.ParkedRequest
	for _, p := range parked {
		if kind == state.InputDeny || (kind == state.InputAnswer) == (p.Kind == state.ParkedQuestion) {
			out = append(out, p)
		}
	}
	return out
}

// answer queues an approve or deny naming one parked request (want, else
// the oldest) and waits until the owner has resolved that request: the
// command succeeds only when its own answer decided it. An answer that
// finds nothing parked, or that lost to another answer or to the defer
// timeout, is refused (exit 4) and applies to nothing.
func answer(env *Env, ref SessionRef, want string, in *state.Input) error {
	h, id, err := ref.pick(env, needPermission)
	if err != nil {
		return err
	}
	from := eventlog.Size(h.LogPath(id)) // before the record: a resolution after this is seen
	s, err := h.LoadSession(id)
	if err != nil {
		return err
	}
	var parked []state.ParkedRequest
	if owner.Live(h, id) { // a request is parked only while its owner lives
		parked = s.ParkedRequests
	}
	if want != "" {
		for _, p := range parked {
			if p.ID != want {
				continue
			}
			switch {
			case p.Kind == state.ParkedQuestion && in.Kind == state.InputApprove:
				return usagef("request %s of session %s is the agent's question (%s): kandev answer %s --request %s VALUE, or kandev deny", want, id, printableLine(p.ToolName), id, want)
			case p.Kind != state.ParkedQuestion && in.Kind == state.InputAnswer:
				return usagef("request %s of session %s is a permission request (%s): kandev approve %s --request %s, or kandev deny", want, id, printableLine(p.ToolName), id, want)
			}
		}
	}
	req, err := owner.PickParked(id, answerable(parked, in.Kind), want, env.Now())
	if err != nil {
		return err
	}
	if in.Kind == state.InputAnswer {
		var schema sdk.UnstableElicitationSchema
		if err := json.Unmarshal(req.Schema, &schema); err != nil {
			return fmt.Errorf("question %s of session %s: its schema cannot be read: %w", req.ID, id, err)
		}
		if _, err := acp.ElicitationContent(schema, in.Text); err != nil {
			return usagef("%s (question %s: %s)", err.Error(), req.ID, printableLine(req.ToolName))
		}
	}
	in.RequestID = req.ID
	d, err := owner.Dial(env.Ctx, owner.Job{Home: h, SessionID: id}, owner.Request{Follows: owner.FollowsAnswer, Answer: in, AnswerFrom: from})
	if err != nil {
		return err
	}
	res := d.Resolution
	if res.AnsweredBy != in.ID {
		how := "by another answer"
		switch res.AnsweredBy {
		case owner.AnsweredByTimeout:
			how = "by the defer timeout (denied)"
		case owner.AnsweredByCancel:
			how = "by the turn's cancel (denied)"
		}
		return fmt.Errorf("%w: request %s of session %s was already answered %s; yours was not applied (kandev status %s lists what waits)", state.ErrNotFound, req.ID, id, how, id)
	}
	env.Out.Object(answerOutput{SessionID: id, Answer: in.Kind, Always: in.Always, RequestID: req.ID, Allowed: res.Allowed}, func(w io.Writer) {
		verb := "approved"
		switch {
		case in.Kind == state.InputDeny && req.Kind == state.ParkedQuestion:
			verb = "declined"
		case in.Kind == state.InputDeny:
			verb = "denied"
		case in.Kind == state.InputAnswer:
			verb = "answered"
		}
		fmt.Fprintf(w, "%s %s (%s): the turn of %s continues in its owner (follow it with kandev attach %s)\n", verb, req.ID, printableLine(req.ToolName), id, id)
	})
	return nil
}

// parseAsker reads an asker given as PID:START (nil for "").
func parseAsker(v string) (*state.Asker, error) {
	if v == "" {
		return nil, nil
	}
	pid, start, _ := strings.Cut(v, ":")
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("asker %q: want PID:START", v)
	}
	return &state.Asker{PID: n, Start: start}, nil
}
