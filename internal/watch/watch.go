// Package watch wakes a follower when one of a few files changes, so
// followers of a log, a record or an inbox need not poll.
package watch

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fallbackPoll is how often a Changes wakes with no notification at all,
// in case a change slipped past them; blindPoll is how often it wakes where
// notifications are unavailable (none on the system, or the per-user limit
// of watchers reached), so followers stay prompt without them.
const (
	fallbackPoll = 500 * time.Millisecond
	blindPoll    = 40 * time.Millisecond
)

// Changes wakes a follower when one of a few files is written, created or
// replaced (inotify on Linux, kqueue on macOS), so followers need not poll.
// A change between two Waits is kept, never lost: Wait then returns at once.
type Changes struct {
	w     *fsnotify.Watcher
	names map[string]bool
	ch    chan struct{}
	done  chan struct{}
}

// WatchFiles watches paths. It never fails: without notifications Wait
// returns every blindPoll instead.
func WatchFiles(paths ...string) *Changes {
	c := &Changes{names: map[string]bool{}, ch: make(chan struct{}, 1), done: make(chan struct{})}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return c
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		c.names[filepath.Clean(p)] = true
		// The directory is watched, not the file: the file may not exist yet,
		// and a record replaced by rename is a new file.
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return c
		}
	}
	c.w = w
	go c.pump()
	return c
}

func (c *Changes) pump() {
	for {
		select {
		case ev, ok := <-c.w.Events:
			if !ok {
				return
			}
			if c.names[filepath.Clean(ev.Name)] {
				c.Notify()
			}
		case _, ok := <-c.w.Errors:
			if !ok {
				return
			}
			c.Notify() // an overflow may have hidden a change: look again
		case <-c.done:
			return
		}
	}
}

// Notify wakes the next Wait as if a watched file had changed.
func (c *Changes) Notify() {
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

// Wait returns nil after a change, after at most max (or the poll interval
// when that is shorter, or max is 0), or ctx's error when it ends.
func (c *Changes) Wait(ctx context.Context, max time.Duration) error {
	limit := fallbackPoll
	if c.w == nil {
		limit = blindPoll
	}
	if max <= 0 || max > limit {
		max = limit
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-c.ch:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// C is ready when a watched file changed (or Notify was called) since the
// last receive, for a loop that selects on other things too. Where
// notifications are unavailable it is never ready: such a loop keeps a
// ticker of its own.
func (c *Changes) C() <-chan struct{} { return c.ch }

// Close stops watching.
func (c *Changes) Close() {
	if c.w != nil {
		close(c.done)
		c.w.Close()
	}
}
