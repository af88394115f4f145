package commands

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/kandev/kandev/acp/owner"
)

func TestConsoleCtrl_CtrlBreakIsSIGTERMWhileSignalsAreWatchedAndCtrlCIsLeftToGo(t *testing.T) {
	ch := make(chan os.Signal, 1)
	stop := notifyCtrlBreak(ch)
	if onConsoleCtrl(windows.CTRL_C_EVENT) != 0 {
		t.Fatal("Ctrl-C was claimed; Go delivers it as os.Interrupt")
	}
	if onConsoleCtrl(windows.CTRL_BREAK_EVENT) != 1 {
		t.Fatal("Ctrl-Break was not claimed")
	}
	if sig := <-ch; sig != syscall.SIGTERM {
		t.Fatalf("Ctrl-Break arrived as %v, want SIGTERM", sig)
	}
	stop()
	if onConsoleCtrl(windows.CTRL_BREAK_EVENT) != 0 {
		t.Fatal("Ctrl-Break still claimed after stop")
	}
}

func TestWatchSignals_CtrlBreakOnTheConsoleIsAShutdown(t *testing.T) {
	s := watchSignals(func() {})
	defer s.stop()
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, 0); err != nil {
		t.Skipf("no console to send Ctrl-Break on: %v", err)
	}
	select {
	case <-s.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Skip("the console delivered no Ctrl-Break (no console attached)")
	}
	if !s.terminated() || context.Cause(s.ctx) != owner.ErrShutdown {
		t.Fatalf("Ctrl-Break ended the command as %v, want a shutdown", context.Cause(s.ctx))
	}
}
