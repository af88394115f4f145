package board

import (
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kandev/kandev/internal/watch"
)

// What a live board learns, as messages to the model.
type (
	// cardsChanged: these sessions were read again (gone: removed).
	cardsChanged struct {
		cards   []Card
		gone    []string
		recheck bool // read by a recheck, not for a file change
	}
	// allLoaded: the whole home was read again.
	allLoaded struct {
		loaded Loaded
		err    error
	}
	// recheck: time to look again at the sessions whose badge depends on
	// a live owner (one killed outright writes no file) and at the ages.
	recheck struct{}
)

// Live watches the sessions directory and reads again only the sessions
// whose files changed. It wakes on file notifications only; with none on
// the system it looks every blindEvery.
type Live struct {
	src *Source
	dir *watch.Dir
	ok  bool
}

// blindEvery is how often a board without file notifications reads the
// home again.
const blindEvery = 2 * time.Second

// WatchHome starts watching src's sessions directory.
func WatchHome(src *Source) *Live {
	d, ok := watch.WatchDir(filepath.Dir(src.Home.LogPath("x")))
	return &Live{src: src, dir: d, ok: ok}
}

// Close stops watching: nothing of the board's keeps running.
func (l *Live) Close() { l.dir.Close() }

// next waits for the next change and reads what it touched.
func (l *Live) next() tea.Cmd {
	if !l.ok {
		return tea.Tick(blindEvery, func(time.Time) tea.Msg {
			lo, err := l.src.LoadAll()
			return allLoaded{lo, err}
		})
	}
	return func() tea.Msg {
		names, all, closed := l.dir.Next()
		if closed {
			return nil
		}
		if all {
			lo, err := l.src.LoadAll()
			return allLoaded{lo, err}
		}
		return l.reread(ids(names))
	}
}

// reread reads the sessions ids again.
func (l *Live) reread(ids []string) cardsChanged {
	var ch cardsChanged
	for _, id := range ids {
		c, gone := l.src.Reload(id)
		if gone {
			ch.gone = append(ch.gone, id)
		} else {
			ch.cards = append(ch.cards, c)
		}
	}
	return ch
}

// ids are the sessions the file names belong to, each once.
func ids(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if id := IDOf(n); id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// Recheck intervals: a session whose badge rests on a live owner is looked
// at again every ownerEvery (an owner killed outright changes no file);
// otherwise only the ages move, every ageEvery.
const (
	ownerEvery = 2 * time.Second
	ageEvery   = 30 * time.Second
)

// recheckAfter schedules the next recheck.
func recheckAfter(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return recheck{} })
}
