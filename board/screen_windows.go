//go:build windows

package board

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/windows"
	"golang.org/x/term"
)

// makeRaw puts the console in raw mode with escape sequences on both sides
// (keys in, drawing out) and returns what restores it; nil when in is not
// a console.
func makeRaw(in io.Reader, out io.Writer) (func(), error) {
	f, ok := in.(fdFile)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, nil
	}
	st, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("cannot read keys from the console: %w", err)
	}
	restore := func() { _ = term.Restore(int(f.Fd()), st) }
	o, ok := out.(fdFile)
	if !ok {
		return restore, nil
	}
	var mode uint32
	h := windows.Handle(o.Fd())
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return restore, nil // not a console: it reads the escapes itself
	}
	if err := windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING); err != nil {
		restore()
		return nil, fmt.Errorf("cannot draw on the console: %w", err)
	}
	return func() { restore(); _ = windows.SetConsoleMode(h, mode) }, nil
}

// watchResize delivers nothing: the console reports resizes as input
// events, which the program turns into size messages itself.
func watchResize() (<-chan os.Signal, func()) { return nil, func() {} }
