package commands

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/internal/watch"
	"github.com/kandev/kandev/verdict"
)

// waitCmd is kandev wait.
type waitCmd struct {
	SessionRef
	Until   string        `required:"" help:"Badges to wait for, comma-separated (idle, running, waiting-for-permission, needs-resume, paused, stopped, done, failed, cancelled)." placeholder:"BADGE[,..]"`
	Timeout time.Duration `help:"Give up after this long (exit 124); default: wait as long as it takes." placeholder:"DUR"`
}

// Help shows an example.
func (c *waitCmd) Help() string {
	return "Example:\n  kandev wait 20261130-0915 --until idle,waiting-for-permission --timeout 10m"
}

var knownBadges = map[string]bool{
	verdict.BadgeDone: true, verdict.BadgeFailed: true, verdict.BadgeCancelled: true, verdict.BadgePaused: true,
	verdict.BadgeNeedsResume: true, verdict.BadgeWaitingForPermission: true, verdict.BadgeRunning: true,
	verdict.BadgeStopped: true, verdict.BadgeIdle: true, verdict.BadgeUnknown: true,
	verdict.BadgeWaitingForLimit: true,
}

// Run blocks until the session's badge is one of --until, waking when its
// files change (and every 200 ms, for an owner that dies without a word).
func (c *waitCmd) Run(env *Env) error {
	want := map[string]bool{}
	for _, b := range strings.Split(c.Until, ",") {
		b = strings.TrimSpace(b)
		if !knownBadges[b] {
			return usagef("--until %q: not a badge (idle, running, waiting-for-permission, needs-resume, paused, stopped, done, failed, cancelled)", b)
		}
		want[b] = true
	}
	if c.Timeout < 0 {
		return usagef("--timeout must be 0 or more")
	}
	h, id, err := c.pick(env, needAny)
	if err != nil {
		return err
	}
	p, err := newProbe(env, "", false)
	if err != nil {
		return err
	}
	changes := watch.WatchFiles(h.RecordPath(id), h.LogPath(id), h.InboxPath(id))
	defer changes.Close()
	var deadline time.Time
	if c.Timeout > 0 {
		deadline = env.Now().Add(c.Timeout)
	}
	for {
		s, err := h.LoadSession(id)
		if err != nil {
			return err
		}
		p.now = env.Now()
		st := p.observe(s)
		if want[st.Badge] {
			env.Out.Object(st, func(w io.Writer) { fmt.Fprintf(w, "session %s: %s (%s)\n", id, st.Badge, st.Reason) })
			return nil
		}
		wait := 200 * time.Millisecond
		if !deadline.IsZero() {
			left := deadline.Sub(env.Now())
			if left <= 0 {
				return fmt.Errorf("%w: session %s is still %s after %s", ErrTimeout, id, st.Badge, c.Timeout)
			}
			wait = min(wait, left)
		}
		if err := changes.Wait(env.Ctx, wait); err != nil {
			return fmt.Errorf("%w: stopped waiting for session %s", owner.ErrInterrupted, id)
		}
	}
}
