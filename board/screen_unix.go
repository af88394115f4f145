//go:build unix

package board

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

// makeRaw puts the input terminal in raw mode (each key as it is typed,
// no echo) and returns what restores it; nil when in is not a terminal.
func makeRaw(in io.Reader, _ io.Writer) (func(), error) {
	f, ok := in.(fdFile)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, nil
	}
	st, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("cannot read keys from the terminal: %w", err)
	}
	return func() { _ = term.Restore(int(f.Fd()), st) }, nil
}

// watchResize delivers the terminal's resizes (SIGWINCH).
func watchResize() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	return ch, func() { signal.Stop(ch) }
}
