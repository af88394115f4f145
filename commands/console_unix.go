//go:build unix

package commands

import (
	"io"
	"os"
)

// openTTY opens the controlling terminal for a question and its answer, or
// returns nil when there is none.
func openTTY() io.ReadWriter {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	return f
}

// notifyCtrlBreak: unix delivers SIGTERM itself; nothing to translate.
func notifyCtrlBreak(chan<- os.Signal) (stop func()) { return func() {} }
