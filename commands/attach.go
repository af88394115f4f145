package commands

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// attachCmd is kandev attach.
type attachCmd struct {
	SessionRef
	Turns int `default:"2" help:"How many of the last turns to show first (0: none)." placeholder:"N"`
	LingerFlag
}

// Help shows an example.
func (c *attachCmd) Help() string {
	return "Example:\n  kandev attach 20261130-0915\n  (type a line to send it as a prompt; Ctrl-C detaches, the session keeps running)"
}

// Run shows the last turns, then follows the log while each line typed is
// queued as a prompt for the session's owner (a detached one is started
// when none runs). Ctrl-C or end of input detaches; nothing is cancelled.
func (c *attachCmd) Run(env *Env) error {
	if c.Turns < 0 {
		return usagef("--turns must be 0 or more (got %d)", c.Turns)
	}
	if !isTerminal(env.Stdin) {
		return usagef("attach needs a terminal on stdin; send prompts with kandev prompt and follow with kandev events --follow")
	}
	h, id, err := c.pick(env, needOpen)
	if err != nil {
		return err
	}
	job, err := ownerJob(env, id, owner.Job{})
	if err != nil {
		return err
	}
	if err := goLive(env, &job, c.LingerFlag, job.Profile.Name, false); err != nil {
		return err
	}
	job.Detach = serveArgs(env, &job, job.Linger)
	from, err := c.showLastTurns(env, h, id)
	if err != nil {
		return err
	}
	env.Out.Info("attached to %s: each line you type is sent as a prompt; Ctrl-C detaches (the session keeps running)", id)
	// A request parked for an answer is asked here: the next line typed
	// answers it (by its request_id) instead of going to the agent.
	parked := followAttached(env, h, id, from)
	var asking []eventlog.Event
	lines := typedLines(env)
	for {
		select {
		case <-env.Ctx.Done():
			env.Out.Finish()
			return nil
		case e := <-parked:
			if len(asking) == 0 {
				askMarker(env, e)
			}
			asking = append(asking, e)
		case line, ok := <-lines:
			if !ok {
				env.Out.Finish()
				return nil
			}
			if len(asking) > 0 {
				if err := answerTyped(env, h, id, asking[0], line); err != nil {
					return err
				}
				if asking = asking[1:]; len(asking) > 0 {
					askMarker(env, asking[0])
				}
				continue
			}
			if strings.TrimSpace(line) == "" {
				continue
			}
			if err := sendTyped(env, job, line); err != nil {
				return err
			}
		}
	}
}

// followAttached prints the session's log from offset from on, and hands
// each request parked for an answer to the channel it returns.
func followAttached(env *Env, h *state.Home, id string, from int64) <-chan eventlog.Event {
	parked := make(chan eventlog.Event, 16)
	go func() {
		_, _ = eventlog.Follow(env.Ctx, h.LogPath(id), from, func(e eventlog.Event) bool {
			env.Out.Event(e)
			if e.Type == eventlog.EventPermissionRequest && e.Deferred {
				parked <- e
			}
			return true
		}, nil)
	}()
	return parked
}

// typedLines is each line read from stdin, closed at the end of input.
func typedLines(env *Env) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		r := bufio.NewScanner(env.Stdin)
		for r.Scan() {
			lines <- r.Text()
		}
	}()
	return lines
}

// sendTyped queues a typed line as a prompt for the session's owner and
// starts a detached owner when none runs; an owner that cannot be started
// is a warning (the prompt waits in the inbox).
func sendTyped(env *Env, job owner.Job, line string) error {
	job.Prompt = line
	in := owner.PromptInput(job) // under this command's permission mode and --linger
	in.Holder = state.DefaultHolder()
	if d, err := owner.Dial(env.Ctx, job, owner.Request{Follows: owner.FollowsQueue, Queue: in}); d == nil {
		return err
	} else if err != nil {
		env.Out.Warn(fmt.Sprintf("could not start an owner for %s: %v", job.SessionID, err))
	}
	return nil
}

// showLastTurns prints the events of the last c.Turns turns and returns the
// log offset just past them, where following starts.
func (c *attachCmd) showLastTurns(env *Env, h *state.Home, id string) (int64, error) {
	var evs []eventlog.Event
	var starts []int
	_, err := eventlog.ScanLog(h.LogPath(id), func(e eventlog.Event) bool {
		if e.Type == eventlog.EventTurnStarted {
			starts = append(starts, len(evs))
		}
		evs = append(evs, e)
		return true
	})
	if err != nil && !isNotFound(err) {
		return 0, err
	}
	for _, e := range evs[firstOfLastTurns(starts, len(evs), c.Turns):] {
		env.Out.Event(e)
	}
	var last int64
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	}
	return eventlog.OffsetAfterSeq(h.LogPath(id), last)
}

// firstOfLastTurns is the index of the first event of the last n turns,
// given the indexes where turns start among total events: 0 when there are
// no more than n turns, total (nothing) when n is 0.
func firstOfLastTurns(starts []int, total, n int) int {
	switch {
	case n <= 0:
		return total
	case len(starts) > n:
		return starts[len(starts)-n]
	}
	return 0
}

// askMarker asks about parked request e: the marker says the next line is
// an answer, not a message.
func askMarker(env *Env, e eventlog.Event) {
	if e.ToolKind == owner.ToolKindQuestion {
		env.Out.mu.Lock()
		env.Out.breakLine()
		env.Out.mu.Unlock()
		fmt.Fprintf(env.Out.Err, "%s (question %s; your next line answers it, an empty one declines) ", printableLine(e.ToolName), e.RequestID)
		return
	}
	choices := "[y/N]"
	if offersAlways(e) {
		choices = "[y/N/always]"
	}
	env.Out.mu.Lock()
	env.Out.breakLine()
	env.Out.mu.Unlock()
	fmt.Fprintf(env.Out.Err, "Allow %s? %s (request %s; your next line answers it) ", printableLine(e.ToolName), choices, e.RequestID)
}

// answerTyped queues the answer that line gives to parked request e.
func answerTyped(env *Env, h *state.Home, id string, e eventlog.Event, line string) error {
	if e.ToolKind == owner.ToolKindQuestion {
		in := &state.Input{Kind: state.InputDeny, RequestID: e.RequestID}
		if v := strings.TrimSpace(line); v != "" {
			in.Kind, in.Text = state.InputAnswer, v
		}
		return answerLive(env, h, id, in)
	}
	ans := strings.ToLower(strings.TrimSpace(line))
	always := offersAlways(e) && (ans == "a" || ans == "always")
	in := &state.Input{Kind: state.InputDeny, RequestID: e.RequestID}
	if ans == "y" || ans == "yes" || always {
		in.Kind, in.Always = state.InputApprove, always
	}
	return answerLive(env, h, id, in)
}

// answerLive sends an answer typed on attach to the owner that parked its
// request; with none left, the request went with it and the answer applies
// to nothing.
func answerLive(env *Env, h *state.Home, id string, in *state.Input) error {
	_, err := owner.Dial(env.Ctx, owner.Job{Home: h, SessionID: id}, owner.Request{Follows: owner.FollowsControl, Control: in})
	return err
}

// offersAlways reports whether parked request e offers an "always allow" option.
func offersAlways(e eventlog.Event) bool {
	var opts []sdk.PermissionOption
	_ = json.Unmarshal(e.Data, &opts)
	for _, o := range opts {
		if o.Kind == sdk.PermissionOptionKindAllowAlways {
			return true
		}
	}
	return false
}
