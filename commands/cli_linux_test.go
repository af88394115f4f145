package commands

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Opening a pseudo-terminal by hand is Linux's ioctl interface.

func TestIsTerminal_APseudoTerminalIsATerminal(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skip("SKIP: no /dev/ptmx to open a pseudo-terminal: " + err.Error())
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skip("SKIP: cannot unlock a pseudo-terminal: " + err.Error())
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skip("SKIP: cannot name a pseudo-terminal: " + err.Error())
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skip("SKIP: cannot open the pseudo-terminal: " + err.Error())
	}
	defer pts.Close()
	if !isTerminal(pts) {
		t.Fatal("a pseudo-terminal does not count as a terminal")
	}
}
