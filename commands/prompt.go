package commands

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/state"
)

// PromptCmd is kandev prompt.
type PromptCmd struct {
	SessionRef
	Text     []string `arg:"" optional:"" name:"prompt" help:"The message; - reads it from stdin."`
	NoFollow bool     `help:"Only queue the message when another process owns the session."`
	Holder   string   `help:"Attach holder (default $KANDEV_HOLDER, else cli:<user>@<host>)." placeholder:"H"`
	Force    bool     `help:"Send even while another holder's lease is live."`
	Key      string   `help:"Idempotency key: the message is sent at most once per session and KEY; a retry follows or prints that turn again." placeholder:"KEY"`
	LingerFlag
}

// Help shows an example.
func (c *PromptCmd) Help() string {
	return "Example:\n  kandev prompt --latest \"recall\""
}

// Run sends the message, becoming the owner when no process owns the session.
func (c *PromptCmd) Run(env *Env) error {
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
	job, err := ownerJob(env, id, owner.Job{Prompt: text})
	if err != nil {
		return err
	}
	if err := goLive(env, &job, c.LingerFlag, job.Profile.Name); err != nil {
		return err
	}
	d, err := deliverPrompt(env.Ctx, job, c.Key, !c.NoFollow)
	env.Out.Finish()
	if d != nil && d.Queued && c.NoFollow {
		env.Out.Object(map[string]any{"queued": map[string]string{"session_id": id, "input_id": d.InputID}}, func(w io.Writer) {
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
func (c *PromptCmd) hintLatest(err error) error {
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

// ownerJob fills the parts of an owner job every command shares.
func ownerJob(env *Env, id string, job owner.Job) (owner.Job, error) {
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
	s, err := h.LoadSession(id)
	if err != nil {
		return job, err
	}
	if state.IsTerminal(s.State) {
		return job, acp.NotResumableState(id, s.State)
	}
	profile, err := acp.LookupProfile(cfg, s.Agent)
	if err != nil {
		return job, err
	}
	job.Home, job.Config, job.SessionID, job.Profile, job.Permissions = h, cfg, id, profile, mode
	if job.Emit == nil {
		job.Emit = env.Out.Event
	}
	job.Ask, job.Progress = askOnTerminal(env), progressLine(env)
	job.Abort, job.Warn = env.Abort, env.Out.Warn
	job.Emit = longTurnNotice(env, cfg, id, job.Emit)
	withNotify(&job, cfg)
	return job, nil
}

// runOwnerResult runs the owner and finishes the stream, leaving the closing object to the caller.
func runOwnerResult(env *Env, id string, job owner.Job) (*owner.Result, error) {
	job, err := ownerJob(env, id, job)
	if err != nil {
		return nil, err
	}
	res, err := owner.Run(env.Ctx, job)
	env.Out.Finish()
	return res, err
}

// askOnTerminal answers permission requests in ask mode from the terminal.
// Without a terminal on stdin nobody can answer: every request is denied,
// and the first denial says how to approve without asking.
func askOnTerminal(env *Env) func(sdk.RequestPermissionRequest) bool {
	var tty io.ReadWriter
	if isTerminal(env.Stdin) {
		tty = openTTY()
	}
	if tty == nil {
		var once sync.Once
		return func(req sdk.RequestPermissionRequest) bool {
			once.Do(func() {
				env.Out.Warn(fmt.Sprintf("denied %s: --permissions ask needs a terminal on stdin; to approve without asking, run with --permissions approve-all (or approve-reads), or set [permissions] mode", permissionTitle(req)))
			})
			return false
		}
	}
	r := bufio.NewReader(tty)
	return func(req sdk.RequestPermissionRequest) bool {
		env.Out.mu.Lock()
		env.Out.breakLine()
		env.Out.mu.Unlock()
		fmt.Fprintf(tty, "Allow %s? [y/N] ", printableLine(permissionTitle(req)))
		line, _ := r.ReadString('\n')
		ans := strings.ToLower(strings.TrimSpace(line))
		return ans == "y" || ans == "yes"
	}
}

// permissionTitle names what a permission request is for.
func permissionTitle(req sdk.RequestPermissionRequest) string {
	if req.ToolCall.Title != nil {
		return *req.ToolCall.Title
	}
	return string(req.ToolCall.ToolCallId)
}
