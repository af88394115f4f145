package board

import (
	"bytes"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func TestFrames_DrawOnlyWhatChanged(t *testing.T) {
	cases := []struct {
		name        string
		w, h        int
		first, next string
		want        string // what drawing next after first writes
	}{
		{"a frame like the last writes nothing", 10, 5, "a\nb\nc", "a\nb\nc", ""},
		{"a changed line is the only one written, cleared to its end", 10, 5, "a\nb\nc", "a\nX\nc",
			"\x1b[H\nX\x1b[K\r\n\x1b[3;H"},
		{"a shorter frame erases what the longer left below", 10, 5, "a\nb\nc", "a\nb", "\x1b[H\n\x1b[J\x1b[2;H"},
		{"a line wider than the terminal is cut, not wrapped", 4, 5, "a", "abcdefgh", "\x1b[Habcd\x1b[H"},
		{"an empty view clears the frame", 10, 5, "a", "", "\x1b[H \x1b[K\x1b[H"},
		{"a frame taller than the terminal keeps its bottom rows", 10, 2, "a\nb", "x\ny\nz", "\x1b[Hy\x1b[K\r\nz\x1b[K\x1b[2;H"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			f := frames{out: &out}
			f.resize(c.w, c.h)
			f.draw(c.first)
			out.Reset()
			f.draw(c.next)
			if got := out.String(); got != c.want {
				t.Fatalf("wrote %q, want %q", got, c.want)
			}
		})
	}
}

func TestFrames_AResizeDrawsTheFrameWhole(t *testing.T) {
	var out bytes.Buffer
	f := frames{out: &out}
	f.resize(10, 5)
	f.draw("a\nb")
	out.Reset()
	f.resize(12, 5)
	f.draw("a\nb")
	if want := "\x1b[H\ra\x1b[K\r\nb\x1b[K\x1b[2;H"; out.String() != want {
		t.Fatalf("after a resize wrote %q, want %q", out.String(), want)
	}
}

// The board's screen is written to by the board alone: a message that
// changes nothing it shows writes nothing (and there is no ticker: the
// program runs without the library's renderer, BenchmarkBoardIdle in e2e
// measures it).
func TestScreen_AMessageThatChangesNothingShownWritesNothing(t *testing.T) {
	var out bytes.Buffer
	s := newScreen(strings.NewReader(""), &out)
	d := drawn{m: testModel(t, 80, 24, everyColumn()...), s: s}
	d.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(out.String(), "Needs you 1") {
		t.Fatalf("the first frame is not drawn: %q", out.String())
	}
	for _, msg := range []tea.Msg{cardsChanged{recheck: true}, actionDone{line: ""}, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")}} {
		out.Reset()
		d.Update(msg)
		if out.Len() != 0 {
			t.Fatalf("%T that changes nothing shown wrote %q", msg, out.String())
		}
	}
	d.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("l")})
	if out.Len() == 0 {
		t.Fatalf("moving to the next column drew nothing")
	}
	if d.View() != "" {
		t.Fatal("the program would render the board itself")
	}
}

// staticView is a program that shows one view and quits.
type staticView string

func (v staticView) Init() tea.Cmd                       { return tea.Quit }
func (v staticView) Update(tea.Msg) (tea.Model, tea.Cmd) { return v, nil }
func (v staticView) View() string                        { return string(v) }

// What a person sees is what the library's own renderer showed: the same
// escapes to take the terminal, draw a frame and give the terminal back.
func TestScreen_WritesWhatTheLibrarysRendererWrote(t *testing.T) {
	view := "Needs you 1  Running 0\n\x1b[1mtitle\x1b[0m\n\nq quit"
	var lib bytes.Buffer
	p := tea.NewProgram(staticView(view), tea.WithInput(nil), tea.WithOutput(&lib),
		tea.WithoutSignalHandler(), tea.WithAltScreen(), tea.WithMouseCellMotion())
	if _, err := p.Run(); err != nil {
		t.Fatal(err)
	}
	var ours bytes.Buffer
	s := newScreen(strings.NewReader(""), &ours)
	if err := s.take(); err != nil {
		t.Fatal(err)
	}
	s.frames.draw(view)
	s.give()
	if ours.String() != lib.String() {
		t.Fatalf("the board writes\n%q\nthe library's renderer wrote\n%q", ours.String(), lib.String())
	}
}
