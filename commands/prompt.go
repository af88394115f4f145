package commands

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/state"
)

// promptCmd is kandev prompt.
type promptCmd struct {
	SessionRef
	Text     []string `arg:"" optional:"" name:"prompt" help:"The message; - reads it from stdin."`
	NoFollow bool     `help:"Only queue the message when another process owns the session."`
	Holder   string   `help:"Attach holder (default $KANDEV_HOLDER, else cli:<user>@<host>)." placeholder:"H"`
	Force    bool     `help:"Send even while another holder's lease is live."`
	Key      string   `help:"Idempotency key: the message is sent at most once per session and KEY; a retry follows or prints that turn again." placeholder:"KEY"`
	Steer    bool     `help:"Add the message to the turn that runs now, where the agent steers; otherwise it is sent as the next turn (and says so)."`
	LingerFlag
	OfflineFlag
}

// Help shows an example.
func (c *promptCmd) Help() string {
	return "Examples:\n  kandev prompt --latest \"recall\"\n  kandev prompt --latest --steer \"also update the changelog\""
}

// Run sends the message, becoming the owner when no process owns the session.
func (c *promptCmd) Run(env *Env) error {
	// With --latest, a lone word is the prompt, not a session id.
	if c.Latest && c.ID != "" {
		c.Text = append([]string{c.ID}, c.Text...)
		c.ID = ""
	}
	id, err := c.resolve(env, needOpen)
	if err != nil {
		return c.hintLatest(err)
	}
	text, err := readPrompt(c.Text, env.Stdin)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return usagef("empty prompt: give the message as arguments or pipe it with -")
	}
	h, err := env.Home()
	if err != nil {
		return err
	}
	holder := c.Holder
	if holder == "" {
		holder = state.DefaultHolder()
	}
	if !c.Force {
		if err := h.CheckLease(id, holder, env.Now()); err != nil {
			return err
		}
	}
	job, err := ownerJob(env, id, owner.Job{Prompt: text, Offline: c.Offline})
	if err != nil {
		return err
	}
	if err := goLive(env, &job, c.LingerFlag, job.Profile.Name, false); err != nil {
		return err
	}
	job.Queued.Steer = c.Steer
	if !c.NoFollow {
		warnNearLimit(env, job) // limit.go: a person's own prompt goes, with a warning
	}
	d, err := deliverPrompt(env.Ctx, job, c.Key, !c.NoFollow)
	env.Out.Finish()
	if d != nil && d.Queued && c.NoFollow {
		env.Out.Object(promptQueuedOutput{Queued: queuedInput{SessionID: id, InputID: d.InputID}}, func(w io.Writer) {
			if reset := heldUntil(h, id, env.Now()); reset != "" {
				fmt.Fprintf(w, "queued as %s: session %s holds unattended work until the agent's usage window resets at %s; kandev recover runs it then\n", d.InputID, id, reset)
				return
			}
			fmt.Fprintf(w, "queued as %s: session %s is busy in another kandev process, which will run it next\n", d.InputID, id)
		})
		return err
	}
	if d != nil && d.Result != nil && d.Result.Session != nil && env.Out.JSON {
		env.Out.Object(d.Result.Session, nil)
	}
	return err
}

// hintLatest explains a first word that names no session: most often it was
// meant as the message. The error keeps its kind (an impossible id is a
// usage error, a well-formed one that matches nothing is not found).
func (c *promptCmd) hintLatest(err error) error {
	kind := state.ErrNotFound
	switch {
	case c.ID == "" || c.Latest:
		return err
	case errors.Is(err, state.ErrInvalidID):
		kind = state.ErrInvalidID
	case !errors.Is(err, state.ErrNotFound):
		return err
	}
	words := strings.Join(append([]string{c.ID}, c.Text...), " ")
	return hintError{fmt.Sprintf("no session %q; to send it to the most recent session: kandev prompt --latest %s", c.ID, shellQuote(words)), kind}
}

// hintError is an error whose message is written for the user, with the
// kind that decides its exit code underneath.
type hintError struct {
	msg  string
	kind error
}

func (e hintError) Error() string { return e.msg }
func (e hintError) Unwrap() error { return e.kind }
