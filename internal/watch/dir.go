package watch

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Dir reports which files of one directory changed, for a reader of many
// files (the board) that re-reads only those. Unlike Changes it never
// wakes by itself: with nothing written it costs nothing.
type Dir struct {
	w       *fsnotify.Watcher
	mu      sync.Mutex
	changed map[string]bool
	lost    bool // an overflow may have hidden changes: read everything again
	ch      chan struct{}
	done    chan struct{}
	once    sync.Once
}

// WatchDir watches dir. ok is false when the system gives no notifications
// (or the per-user limit of watchers is reached): the caller then has only
// what it reads itself.
func WatchDir(dir string) (d *Dir, ok bool) {
	d = &Dir{changed: map[string]bool{}, ch: make(chan struct{}, 1), done: make(chan struct{})}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return d, false
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return d, false
	}
	d.w = w
	go d.pump()
	return d, true
}

func (d *Dir) pump() {
	for {
		select {
		case ev, ok := <-d.w.Events:
			if !ok {
				return
			}
			d.mark(filepath.Base(ev.Name), false)
		case _, ok := <-d.w.Errors:
			if !ok {
				return
			}
			d.mark("", true)
		case <-d.done:
			return
		}
	}
}

func (d *Dir) mark(name string, lost bool) {
	d.mu.Lock()
	if lost {
		d.lost = true
	} else {
		d.changed[name] = true
	}
	d.mu.Unlock()
	select {
	case d.ch <- struct{}{}:
	default:
	}
}

// Next blocks until something changed (or Close), then returns the names
// that changed since the last call, and all when notifications may have
// been lost. Changes that arrive while the caller works are kept for the
// next call. closed is true once the Dir is closed.
func (d *Dir) Next() (names []string, all, closed bool) {
	select {
	case <-d.ch:
	case <-d.done:
		return nil, false, true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for n := range d.changed {
		names = append(names, n)
	}
	clear(d.changed)
	all, d.lost = d.lost, false
	return names, all, false
}

// Close stops watching and ends a Next that waits.
func (d *Dir) Close() {
	d.once.Do(func() {
		close(d.done)
		if d.w != nil {
			d.w.Close()
		}
	})
}
