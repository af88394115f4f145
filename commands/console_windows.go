package commands

import (
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"
)

// Colours are ANSI escapes: a Windows console shows them once asked to
// (ENABLE_VIRTUAL_TERMINAL_PROCESSING, on every Windows Go supports).
func init() {
	for _, f := range []*os.File{os.Stdout, os.Stderr} {
		var mode uint32
		if h := windows.Handle(f.Fd()); windows.GetConsoleMode(h, &mode) == nil {
			_ = windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING)
		}
	}
}

// openTTY opens the console for a question and its answer (CONIN$ and
// CONOUT$, Windows' /dev/tty), or returns nil when there is none.
func openTTY() io.ReadWriter {
	in, err := os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	out, err := os.OpenFile("CONOUT$", os.O_WRONLY, 0)
	if err != nil {
		in.Close()
		return nil
	}
	return struct {
		io.Reader
		io.Writer
	}{in, out}
}

// Go delivers both Ctrl-C and Ctrl-Break as os.Interrupt. Ctrl-Break is
// what Windows sends to stop a console program that is not the user's
// to cancel (a service manager, a CI runner, taskkill's console peers), so
// kandev takes it as SIGTERM: a shutdown, not a cancelled turn. A console
// control handler registered after Go's runs first and claims Ctrl-Break
// while signals are watched; Ctrl-C and the rest go on to Go's handler.
var ctrlBreak struct {
	sync.Mutex
	once sync.Once
	to   chan<- os.Signal
}

// onConsoleCtrl is the console control handler: it claims Ctrl-Break for
// the channel being watched, if any.
func onConsoleCtrl(event uint32) uintptr {
	if event != windows.CTRL_BREAK_EVENT {
		return 0
	}
	ctrlBreak.Lock()
	defer ctrlBreak.Unlock()
	if ctrlBreak.to == nil {
		return 0
	}
	select {
	case ctrlBreak.to <- syscall.SIGTERM:
	default: // a signal is already waiting to be read
	}
	return 1
}

// notifyCtrlBreak sends syscall.SIGTERM to ch for each Ctrl-Break until stop.
func notifyCtrlBreak(ch chan<- os.Signal) (stop func()) {
	ctrlBreak.once.Do(func() {
		proc := windows.NewLazySystemDLL("kernel32.dll").NewProc("SetConsoleCtrlHandler")
		_, _, _ = proc.Call(windows.NewCallback(onConsoleCtrl), 1)
	})
	ctrlBreak.Lock()
	ctrlBreak.to = ch
	ctrlBreak.Unlock()
	return func() {
		ctrlBreak.Lock()
		if ctrlBreak.to == ch {
			ctrlBreak.to = nil
		}
		ctrlBreak.Unlock()
	}
}
