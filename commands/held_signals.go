package commands

import (
	"os"
	"os/signal"
	"syscall"
)

// held keeps the signals that arrive while the process starts, before the
// command is parsed and knows what a signal means to it: a terminal closed
// 50 ms after Enter must not kill a prompt that would have carried its turn
// to the end. HoldSignals fills it; the command's watcher reads it, or a
// command that only reads lets go of it and dies of the held signal the
// default way.
var held chan os.Signal

// HoldSignals starts holding SIGINT, SIGTERM and SIGHUP. main calls it first.
func HoldSignals() {
	held = make(chan os.Signal, 4)
	signal.Notify(held, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// takeHeld returns the channel that already receives the signals (the held
// one, or a new one when nothing was held, as in tests).
func takeHeld() chan os.Signal {
	ch := held
	held = nil
	if ch == nil {
		ch = make(chan os.Signal, 4)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	}
	return ch
}

// releaseHeld gives the signals back to their default effect and, if one
// arrived while they were held, has it now.
func releaseHeld() {
	ch := held
	held = nil
	if ch == nil {
		return
	}
	signal.Stop(ch)
	select {
	case sig := <-ch:
		dieOf(sig)
	default:
	}
}
