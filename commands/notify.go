package commands

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/notify"
)

// notifyRunCmd runs the [notify] command for one notification, detached
// from the owner that started it; users never run it.
type notifyRunCmd struct {
	Timeout time.Duration `default:"10s"`
	Command []string      `arg:"" passthrough:""`
}

// Run runs the hook with the note on stdin; how it failed is this
// process's exit status, which the owner that started it reads.
func (c *notifyRunCmd) Run(env *Env) error {
	cmd := c.Command
	if len(cmd) > 0 && cmd[0] == "--" {
		cmd = cmd[1:]
	}
	return notify.Run(os.Stdin, cmd, c.Timeout)
}

// withNotify sets the job's notifications from the [notify] config.
func withNotify(job *owner.Job, cfg *config.Config) {
	if len(cfg.Notify.Command) == 0 {
		return
	}
	hook := notify.Hook{Command: cfg.Notify.Command, Timeout: time.Duration(cfg.Notify.TimeoutSeconds) * time.Second}
	job.Notify = func(n notify.Note, failed func(error)) {
		if err := hook.Send(n, failed); err != nil {
			// Not on this goroutine: the owner calls Notify while it writes its log.
			go failed(&notify.Failure{Kind: notify.FailStart, Err: err})
		}
	}
}

// DefaultNotifyAfter is [notify] after_seconds when unset.
const DefaultNotifyAfter = 30 * time.Second

// longTurnNotice wraps emit so that a turn that ran longer than [notify]
// after_seconds ends with an OSC 9 terminal notification on stderr, when
// stderr is a terminal.
func longTurnNotice(env *Env, cfg *config.Config, id string, emit func(eventlog.Event)) func(eventlog.Event) {
	after := DefaultNotifyAfter
	if s := cfg.Notify.AfterSeconds; s != 0 {
		after = time.Duration(s) * time.Second
	}
	if emit == nil || after < 0 || !isTerminal(env.Out.Err) {
		return emit
	}
	var mu sync.Mutex
	started := map[string]time.Time{}
	return func(e eventlog.Event) {
		emit(e)
		mu.Lock()
		defer mu.Unlock()
		switch e.Type {
		case eventlog.EventTurnStarted:
			started[e.TurnID] = e.Time()
		case eventlog.EventTurnEnded:
			if t0, ok := started[e.TurnID]; ok && e.Time().Sub(t0) > after {
				env.Out.mu.Lock()
				writeOSC9(env.Out.Err, fmt.Sprintf("kandev: session %s: turn %s ended (%s)", id, e.TurnID, e.StopReason))
				env.Out.mu.Unlock()
			}
		}
	}
}

// writeOSC9 writes an OSC 9 notification (ESC ] 9 ; text BEL), which
// terminals such as iTerm2, kitty, WezTerm and Windows Terminal show.
func writeOSC9(w io.Writer, text string) {
	fmt.Fprintf(w, "\x1b]9;%s\x07", printableLine(text))
}
