package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/acp/surgery"
	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
)

// LeaseFlags are --holder and --force of the commands that change a
// session's conversation, which another holder's live lease refuses.
type LeaseFlags struct {
	Holder string `help:"Attach holder (default $KANDEV_HOLDER, else cli:<user>@<host>)." placeholder:"H"`
	Force  bool   `help:"Go ahead even while another holder's lease is live."`
}

// check refuses (exit 3) when another holder's lease on id is live, unless --force.
func (l LeaseFlags) check(env *Env, h *state.Home, id string) error {
	if l.Force {
		return nil
	}
	holder := l.Holder
	if holder == "" {
		holder = state.DefaultHolder()
	}
	return h.CheckLeaseFor(state.LeaseOpChange, id, holder, env.Now())
}

// rewindCmd is kandev rewind.
type rewindCmd struct {
	SessionRef
	To int64 `required:"" help:"The turn boundary to go back to: the seq of a turn_ended, or 0." placeholder:"SEQ"`
	LeaseFlags
}

// Help shows an example.
func (c *rewindCmd) Help() string {
	return "The agent continues as if nothing after SEQ had been said: the next prompt starts a fresh\n" +
		"agent session carrying the conversation up to SEQ. The log keeps everything (transcript\n" +
		"--all-epochs shows it). Files on disk are not rewound.\n\n" +
		"Example:\n  kandev events 20261130-0915 --type turn_ended\n  kandev rewind 20261130-0915 --to 14"
}

// Run appends the epoch fence.
func (c *rewindCmd) Run(env *Env) error {
	if c.To < 0 {
		return usagef("--to must be a seq (0 or more)")
	}
	return rewind(env, c.SessionRef, c.To, c.LeaseFlags)
}

// clearCmd is kandev clear.
type clearCmd struct {
	SessionRef
	LeaseFlags
}

// Help shows an example.
func (c *clearCmd) Help() string {
	return "The agent starts over with no history (a rewind to 0); the log keeps everything.\n" +
		"Files on disk are not rewound.\n\nExample:\n  kandev clear 20261130-0915"
}

// Run rewinds to the empty conversation.
func (c *clearCmd) Run(env *Env) error { return rewind(env, c.SessionRef, 0, c.LeaseFlags) }

// rewind runs a rewind or a clear and says what it did and did not undo.
func rewind(env *Env, ref SessionRef, to int64, lease LeaseFlags) error {
	h, id, err := ref.pick(env, needIdle)
	if err != nil {
		return err
	}
	if err := lease.check(env, h, id); err != nil {
		return err
	}
	if err := closeIdleWarm(env, h, id); err != nil {
		return err
	}
	if err := env.beforeCommit("kandev rewind " + id); err != nil {
		return err
	}
	rep, err := surgery.Rewind(h, id, to)
	if err := asUsage(err); err != nil {
		return err
	}
	env.commit("the rewind of " + id)
	env.Out.Object(rewindOutput{Rewind: rep}, func(w io.Writer) {
		if to == 0 {
			fmt.Fprintf(w, "cleared %s (epoch %d): the next prompt starts a fresh agent session with no history\n", id, rep.Epoch)
		} else {
			fmt.Fprintf(w, "rewound %s to seq %d (epoch %d): the next prompt starts a fresh agent session with the conversation up to there\n", id, to, rep.Epoch)
		}
		if len(rep.FileChanges) == 0 {
			fmt.Fprintln(w, "files on disk are not rewound (the log shows no tool call after that point that changed files)")
			return
		}
		fmt.Fprintf(w, "files on disk are not rewound; %d tool call(s) after seq %d changed files:\n", len(rep.FileChanges), to)
		for _, f := range rep.FileChanges {
			fmt.Fprintf(w, "  #%d %s %s\n", f.Seq, f.Kind, printableLine(f.Title))
		}
	})
	return nil
}

// closeIdleWarm ends the warm owner of session id when all it does is keep
// an idle agent alive (owner.CloseIdleWarm).
func closeIdleWarm(env *Env, h *state.Home, id string) error {
	return owner.CloseIdleWarm(env.Ctx, h, id)
}

// asUsage turns a seq that is not a turn boundary into a usage error.
func asUsage(err error) error {
	var be *surgery.BoundaryError
	if errors.As(err, &be) {
		return usagef("%s", be.Error())
	}
	return err
}

// worktreeFlag is --worktree[=BRANCH]. The bare flag takes no value, so a
// prompt after it is never read as a branch name; =BRANCH names the new
// branch (default kandev/<session id>).
type worktreeFlag struct {
	Set    bool
	Branch string
}

// Decode implements kong.MapperValue.
func (f *worktreeFlag) Decode(ctx *kong.DecodeContext) error {
	f.Set = true
	if ctx.Scan.Peek().Type == kong.FlagValueToken {
		f.Branch = fmt.Sprint(ctx.Scan.Pop().Value)
		if f.Branch == "" || f.Branch == "true" {
			f.Branch = ""
		}
	}
	return nil
}

// IsBool makes the flag take no separate value.
func (f *worktreeFlag) IsBool() bool { return true }

// placeInWorktree gives session s its own linked worktree on a new branch,
// made from the HEAD of the repository s.Cwd is in, and moves s there.
func placeInWorktree(s *state.Session, branch string) error {
	if branch == "" {
		branch = worktree.DefaultWorktreeBranch(s.ID)
	}
	top := s.Cwd
	if s.Worktree != nil && s.Worktree.Path != "" {
		top = s.Worktree.Path
	}
	wt, rel, err := worktree.AddWorktree(s.Cwd, branch, worktree.SessionWorktreePath(top, s.ID))
	if errors.Is(err, worktree.ErrNoGit) {
		return usagef("--worktree: %s", err.Error())
	}
	if err != nil {
		return err
	}
	s.Worktree, s.Cwd = &wt, filepath.Join(wt.Path, rel)
	return nil
}

// forkCmd is kandev fork.
type forkCmd struct {
	SessionRef
	At         int64        `default:"-1" help:"The turn boundary to fork at: the seq of a turn_ended, or 0 (default: the end)." placeholder:"SEQ"`
	Title      string       `help:"Title of the new session (default: fork of <title>)." placeholder:"T"`
	Worktree   worktreeFlag `help:"Work in a new linked git worktree (--worktree=BRANCH names its branch)."`
	SetupFlags              // setup.go: the parent's setup, with these over it
}

// Help shows an example.
func (c *forkCmd) Help() string {
	return "A new session with the conversation up to SEQ; the parent is untouched. The agent's own\n" +
		"session/fork is used when it offers it and the fork is at the end; otherwise the first\n" +
		"prompt carries the copied conversation.\n\n" +
		"Example:\n  kandev fork 20261130-0915 --title \"try the other approach\"\n  kandev fork 20261130-0915 --at 14 --worktree=try-b"
}

// Run creates the child session.
func (c *forkCmd) Run(env *Env) error {
	if c.At < -1 {
		return usagef("--at must be a seq (0 or more)")
	}
	h, id, err := c.pick(env, needAny)
	if err != nil {
		return err
	}
	parent, err := h.LoadSession(id)
	if err != nil {
		return err
	}
	su, servers, err := c.SetupFlags.forked(parent)
	if err != nil {
		return err
	}
	spec := surgery.ForkSpec{Parent: id, At: c.At, Title: c.Title, Now: env.Now().UTC()}
	spec.Place = func(s *state.Session) error {
		s.Setup, s.MCPConfig = su, servers
		// Servers a pull brought that this machine has not agreed to still wait in the fork.
		s.TrustPending = parent.TrustPending
		// A working directory a pull chose stays refused in the fork too.
		s.PulledCwd = parent.PulledCwd
		if c.Worktree.Set {
			return placeInWorktree(s, c.Worktree.Branch)
		}
		return nil
	}
	// A fork is all or nothing for a signal: one that came first creates
	// nothing (exit 143 or 130); once the child exists the fork is finished
	// and reported, exit 0, so a retrying caller never makes two.
	if env.Ctx.Err() != nil {
		return fmt.Errorf("%w: kandev fork %s was stopped before it created anything", context.Cause(env.Ctx), id)
	}
	child, atEnd, err := surgery.Fork(h, spec)
	if err := asUsage(err); err != nil {
		return err
	}
	env.committed = true
	if err := logInitialSetup(h, child); err != nil {
		return err
	}
	method, fallback, err := forkAgentSession(env, h, parent, child, atEnd)
	if err != nil {
		return err
	}
	if env.Ctx.Err() != nil {
		env.Out.Warn(fmt.Sprintf("%s arrived after session %s was created: the fork is complete and kept (do not fork again)", signalName(env.Ctx), child.ID))
	}
	if child, err = h.LoadSession(child.ID); err != nil {
		return err
	}
	info := forkInfo{ParentID: id, ForkedAt: child.ForkedAt, Method: method, FallbackReason: fallback}
	env.Out.Object(forkOutput{Session: child, Fork: info}, func(w io.Writer) {
		fmt.Fprintln(w, child.ID)
		how := "the agent's own session/fork"
		if method == surgery.ForkReplay {
			how = "a fresh agent session; the first prompt carries the conversation"
		}
		fmt.Fprintf(w, "forked %s at seq %d (%s)\n", id, child.ForkedAt, how)
		if fallback != "" {
			fmt.Fprintf(w, "native fork not used: %s\n", fallback)
		}
		if child.Worktree != nil && child.Worktree.Owned {
			fmt.Fprintf(w, "worktree %s on branch %s\n", child.Worktree.Path, child.Worktree.Branch)
		}
		fmt.Fprintf(w, "next: kandev prompt %s \"...\"\n", child.ID)
	})
	return nil
}

// forkAgentSession makes the child's agent session natively when
// surgery.ChooseForkMethod says so; a failed native fork leaves the replay
// path, and says why.
func forkAgentSession(env *Env, h *state.Home, parent, child *state.Session, atEnd bool) (method, fallback string, err error) {
	cfg, err := env.Config()
	if err != nil {
		return "", "", err
	}
	profile, err := acp.LookupProfile(cfg, parent.Agent)
	if err != nil {
		return surgery.ForkReplay, "agent profile " + parent.Agent + ": " + err.Error(), nil
	}
	facts := surgery.ForkFacts{
		Advertised: surgery.ForkAdvertised(parent.Capabilities), ParentToken: parent.ResumeToken,
		ParentTurn: parent.CurrentTurn, AtEnd: atEnd, NativeAllow: profile.NativeResume,
	}
	if surgery.ChooseForkMethod(facts) == surgery.ForkNative {
		// A warm owner that only keeps the parent's idle agent alive is
		// closed, as for the other surgery, rather than fall back to replay.
		if err := closeIdleWarm(env, h, parent.ID); err != nil {
			return "", "", err
		}
	}
	facts.ParentLive = owner.Live(h, parent.ID)
	if surgery.ChooseForkMethod(facts) == surgery.ForkReplay {
		return surgery.ForkReplay, "", nil
	}
	if err := surgery.NativeFork(env.Ctx, h, cfg, profile, parent, child); err != nil {
		if env.Ctx.Err() != nil {
			return surgery.ForkReplay, "stopped by " + signalName(env.Ctx) + " (the first prompt carries the conversation instead)", nil
		}
		return surgery.ForkReplay, err.Error(), nil
	}
	return surgery.ForkNative, "", nil
}

// signalName names the signal that ended ctx, for messages.
func signalName(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), owner.ErrShutdown) {
		return "SIGTERM"
	}
	return "SIGINT"
}
