package board

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// Runner runs the kandev commands the keys stand for: this same binary,
// with the board's global flags, so an action is exactly the command a
// person would type.
type Runner struct {
	Exe      string   // the kandev binary (os.Executable)
	Base     []string // global flags for every command (--home, --config, ...)
	inflight *inflight
	screen   *screen // the terminal the board holds; nil without one
}

// errQuitting: an action asked for as the board quits is not started.
var errQuitting = errors.New("the board is quitting")

func (r Runner) command(args []string) *exec.Cmd {
	return exec.Command(r.Exe, append(append([]string{}, r.Base...), args...)...)
}

// beside runs cmd beside the board, as one of its inflight actions.
func (r Runner) beside(cmd *exec.Cmd) error {
	if r.inflight == nil {
		return cmd.Run()
	}
	return r.inflight.run(cmd)
}

// actionDone is the outcome of an action that ran beside the board.
type actionDone struct {
	act  Action
	line string // what to say about it, one line
}

// background runs a in its own process and reports one line: its last line
// of output on failure, else that it was done.
func (r Runner) background(a Action) tea.Cmd {
	return func() tea.Msg {
		var out bytes.Buffer
		cmd := r.command(a.Args)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := r.beside(cmd)
		return actionDone{act: a, line: outcome(a, err, out.String())}
	}
}

// foreground hands the terminal to a and takes it back when it ends.
func (r Runner) foreground(a Action) tea.Cmd {
	return r.exec(process{r.command(a.Args)}, func(err error) tea.Msg {
		return actionDone{act: a, line: outcome(a, err, "")}
	})
}

// exec runs c with the terminal given back as it was before the board,
// and the board's again when c ends.
func (r Runner) exec(c tea.ExecCommand, done tea.ExecCallback) tea.Cmd {
	if r.screen != nil {
		c = handover{ExecCommand: c, s: r.screen}
	}
	return tea.Exec(c, done)
}

// process is a command run on the terminal: the streams it has none of
// its own for are the terminal's (as with tea.ExecProcess).
type process struct{ *exec.Cmd }

func (p process) SetStdin(r io.Reader) {
	if p.Stdin == nil {
		p.Stdin = r
	}
}

func (p process) SetStdout(w io.Writer) {
	if p.Stdout == nil {
		p.Stdout = w
	}
}

func (p process) SetStderr(w io.Writer) {
	if p.Stderr == nil {
		p.Stderr = w
	}
}

// transcriptReady carries a transcript to show in the pager.
type transcriptReady struct {
	act  Action
	text []byte
	line string // set when the transcript could not be read
}

func (r Runner) transcript(a Action) tea.Cmd {
	return func() tea.Msg {
		var out, errOut bytes.Buffer
		cmd := r.command(a.Args)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := r.beside(cmd); err != nil {
			return transcriptReady{act: a, line: outcome(a, err, errOut.String())}
		}
		return transcriptReady{act: a, text: out.Bytes()}
	}
}

// pager shows text in $PAGER (default less -R); without one, plainly,
// until Enter.
func (r Runner) pager(a Action, text []byte) tea.Cmd {
	done := func(err error) tea.Msg { return actionDone{act: a, line: outcome(a, err, "")} }
	words := strings.Fields(os.Getenv("PAGER"))
	if len(words) == 0 {
		words = []string{"less", "-R"}
	}
	if _, err := exec.LookPath(words[0]); err != nil {
		return r.exec(&plainPager{text: text}, done)
	}
	cmd := exec.Command(words[0], words[1:]...)
	cmd.Stdin = bytes.NewReader(text) // the text, not the terminal
	return r.exec(process{cmd}, done)
}

// plainPager prints the text and waits for Enter: the pager where none is
// installed.
type plainPager struct {
	text    []byte
	in      io.Reader
	out, eo io.Writer
}

func (p *plainPager) SetStdin(r io.Reader)  { p.in = r }
func (p *plainPager) SetStdout(w io.Writer) { p.out = w }
func (p *plainPager) SetStderr(w io.Writer) { p.eo = w }
func (p *plainPager) Run() error {
	if _, err := p.out.Write(p.text); err != nil {
		return err
	}
	fmt.Fprint(p.out, "\n(Enter: back to the board) ")
	var b [1]byte
	for {
		n, err := p.in.Read(b[:])
		if err != nil || n == 1 && (b[0] == '\n' || b[0] == '\r') {
			return nil
		}
	}
}

// outcome is the one line the board says about an action that ended.
func outcome(a Action, err error, out string) string {
	what := a.Name + " " + a.Args[1]
	if err == nil {
		return what + ": done"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() == 130 {
			return what + ": interrupted (Ctrl-C)"
		}
		if last := lastLine(out); last != "" {
			return fmt.Sprintf("%s: exit %d: %s", what, ee.ExitCode(), last)
		}
		return fmt.Sprintf("%s: exit %d", what, ee.ExitCode())
	}
	return what + ": " + err.Error()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return oneLine(lines[len(lines)-1])
}
