package board

import (
	"context"
	"errors"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Terminal is where the board draws and reads keys.
type Terminal struct {
	In    io.Reader
	Out   io.Writer
	Color bool // false: no colour (NO_COLOR, --no-color)
}

// Renderer is the lipgloss renderer for out, without colour unless color.
func Renderer(out io.Writer, color bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(out)
	if !color {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

// Run shows the live board on term until q (or ctx ends). It reads the
// home once, then only the sessions whose files change; when it returns
// the watch and every action it started beside it have ended. It draws a
// frame only when a message changed what the board shows: idle, it wakes
// for nothing.
func Run(ctx context.Context, src *Source, run Runner, term Terminal, f Filter, allDone bool, now func() time.Time) error {
	lo, err := src.LoadAll()
	if err != nil {
		return err
	}
	live := WatchHome(src)
	defer live.Close()
	run.inflight = &inflight{}
	defer run.inflight.finish(finishGrace)
	s := newScreen(term.In, term.Out)
	run.screen = s
	m := NewModel(lo, f, allDone, live, run, newStyles(Renderer(term.Out, term.Color)), now)
	if err := s.take(); err != nil {
		return err
	}
	defer s.give()
	d := drawn{m: m, s: s}
	if w, h, ok := s.size(); ok {
		d.Update(tea.WindowSizeMsg{Width: w, Height: h}) // the first frame
	}
	// No renderer: the screen draws. The mouse option still tells the
	// input reader to read mouse events (on Windows it asks the console).
	p := tea.NewProgram(d, tea.WithContext(ctx), tea.WithInput(term.In), tea.WithOutput(term.Out),
		tea.WithoutRenderer(), tea.WithMouseCellMotion())
	stop := make(chan struct{})
	defer close(stop)
	go s.sendSizes(p.Send, stop)
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// FirstScreen is what the board first draws on a w x h terminal, and all
// the work of opening it (reading the home, arranging, drawing) without a
// terminal: what a benchmark of opening the board measures.
func FirstScreen(src *Source, w, h int, f Filter, allDone bool, now func() time.Time) (string, error) {
	lo, err := src.LoadAll()
	if err != nil {
		return "", err
	}
	m := NewModel(lo, f, allDone, &Live{src: src}, Runner{}, newStyles(Renderer(io.Discard, false)), now)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m.View(), nil
}
