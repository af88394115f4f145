package board

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// frames draws the board on the alternate screen, and only when what it
// shows changed. The library's renderer draws on a ticker (at least once a
// second, 20 times here for a log line to reach the screen in time), so an
// idle board woke for every frame; the board must use no CPU while nothing
// changes, so it draws its own frames, each when a message changed the view.
// What it writes is what that renderer wrote: only the lines that changed,
// each cleared to its end, and the rows below the frame erased.
type frames struct {
	out   io.Writer
	w, h  int
	last  string   // the frame on the screen ("" after a repaint)
	lines []string // its lines, to skip those that did not change
	rows  int      // the rows it took, to erase what a longer one left
}

// resize is a new terminal size: the next frame is drawn whole.
func (f *frames) resize(w, h int) {
	f.w, f.h = w, h
	f.repaint()
}

// repaint forgets what is on the screen: the next frame is drawn whole.
func (f *frames) repaint() { f.last, f.lines = "", nil }

// cleared: the screen was cleared (the alternate screen entered).
func (f *frames) cleared() {
	f.repaint()
	f.rows = 0
}

// draw writes view unless it is the frame already on the screen.
func (f *frames) draw(view string) {
	if view == "" {
		view = " " // an empty view still clears the last frame
	}
	if view == f.last {
		return
	}
	lines := strings.Split(view, "\n")
	if f.h > 0 && len(lines) > f.h {
		lines = lines[len(lines)-f.h:]
	}
	var b strings.Builder
	b.WriteString(ansi.CursorHomePosition)
	for i, line := range lines {
		if i < len(f.lines) && f.lines[i] == line {
			if i < len(lines)-1 {
				b.WriteByte('\n') // raw output: down a row, same column
			}
			continue
		}
		if i == 0 && f.last == "" {
			b.WriteByte('\r')
		}
		b.WriteString(f.fit(line))
		if i < len(lines)-1 {
			b.WriteString("\r\n")
		}
	}
	if f.rows > len(lines) {
		b.WriteString(ansi.EraseScreenBelow)
	}
	b.WriteString(ansi.CursorPosition(0, len(lines)))
	_, _ = io.WriteString(f.out, b.String()) // a terminal gone is a SIGHUP, not an error to draw
	f.last, f.lines, f.rows = view, lines, len(lines)
}

// fit cuts line to the terminal's width (a wrapped line would shift every
// row below it) and clears the rest of its row.
func (f *frames) fit(line string) string {
	if f.w <= 0 {
		return line
	}
	line = ansi.Truncate(line, f.w, "")
	if ansi.StringWidth(line) < f.w {
		line += ansi.EraseLineRight // at the last column it would erase the last cell
	}
	return line
}
