package board

import (
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"
)

// Taking the terminal and giving it back: the escapes the library's
// renderer writes for the alternate screen, the mouse (cell motion, SGR),
// bracketed paste and the hidden cursor, in its order.
const (
	takeEscapes = ansi.HideCursor +
		ansi.SetModeAltScreenSaveCursor + ansi.EraseEntireScreen + ansi.CursorHomePosition + ansi.HideCursor +
		ansi.SetModeBracketedPaste +
		ansi.SetModeMouseButtonEvent + ansi.SetModeMouseExtSgr
	giveEscapes = ansi.EraseEntireLine + "\r" +
		ansi.ResetModeBracketedPaste + ansi.ShowCursor +
		ansi.ResetModeMouseButtonEvent + ansi.ResetModeMouseAnyEvent + ansi.ResetModeMouseExtSgr +
		ansi.ResetModeAltScreenSaveCursor + ansi.ShowCursor
)

// screen is the terminal while the board holds it: keys read raw, the
// alternate screen, the mouse, and the frames. It is used from the
// program's event loop only (messages, and the commands it hands the
// terminal to), so it needs no lock.
type screen struct {
	in     io.Reader
	out    io.Writer
	frames frames
	cooked func() // gives the input back its mode; nil while not raw
	again  chan struct{}
}

// fdFile is a stream with a file descriptor: a terminal, perhaps.
type fdFile interface{ Fd() uintptr }

func newScreen(in io.Reader, out io.Writer) *screen {
	return &screen{in: in, out: out, frames: frames{out: out}, again: make(chan struct{}, 1)}
}

// take makes the terminal the board's: keys raw, the alternate screen
// (cleared), the mouse on, the cursor hidden.
func (s *screen) take() error {
	cooked, err := makeRaw(s.in, s.out)
	if err != nil {
		return err
	}
	s.cooked = cooked
	_, _ = io.WriteString(s.out, takeEscapes)
	s.frames.cleared()
	return nil
}

// give gives the terminal back as it was before take.
func (s *screen) give() {
	_, _ = io.WriteString(s.out, giveEscapes)
	if s.cooked != nil {
		s.cooked()
		s.cooked = nil
	}
}

// size is the terminal's size now; false when it cannot tell.
func (s *screen) size() (w, h int, ok bool) {
	f, isFile := s.out.(fdFile)
	if !isFile {
		return 0, 0, false
	}
	w, h, err := term.GetSize(int(f.Fd()))
	return w, h, err == nil
}

// resized asks for the size to be looked at again (after a handover, when a
// resize may have gone to the command that had the terminal).
func (s *screen) resized() {
	select {
	case s.again <- struct{}{}:
	default:
	}
}

// sendSizes tells the board the terminal's size on every resize, until
// stop is closed.
func (s *screen) sendSizes(send func(tea.Msg), stop <-chan struct{}) {
	winch, unwatch := watchResize()
	defer unwatch()
	for {
		select {
		case <-stop:
			return
		case <-winch:
		case <-s.again:
		}
		if w, h, ok := s.size(); ok {
			send(tea.WindowSizeMsg{Width: w, Height: h})
		}
	}
}

// handover runs a command with the terminal as it was before the board
// took it (cooked keys, the main screen, no mouse) and takes it back after.
type handover struct {
	tea.ExecCommand
	s *screen
}

func (h handover) Run() error {
	h.s.give()
	err := h.ExecCommand.Run()
	if terr := h.s.take(); err == nil {
		err = terr
	}
	h.s.resized()
	return err
}

// drawn is the board as the program runs it: after each message, the
// screen draws the model's view if it changed. The program itself runs
// without a renderer, so its View is empty.
type drawn struct {
	m *Model
	s *screen
}

func (d drawn) Init() tea.Cmd { return d.m.Init() }

func (d drawn) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		d.s.frames.resize(ws.Width, ws.Height)
	}
	_, cmd := d.m.Update(msg)
	d.s.frames.draw(d.m.View())
	return d, cmd
}

func (d drawn) View() string { return "" }
