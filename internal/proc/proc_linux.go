package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/kandev/kandev/internal/procstat"
)

// Linux reads process facts from /proc: no dependency, no subprocess, and
// /proc/PID/environ is readable for every process of the same user.

// ProcessStart returns an identifier of when process pid started (field 22
// of /proc/PID/stat), so a recorded pid is not confused with a later process
// that reused it. "" if the process does not exist or is a zombie.
func ProcessStart(pid int) string {
	if pid <= 0 {
		return ""
	}
	return procstat.Start(pid)
}

// eachProcessEnv calls fn with every live process of this user but this
// one whose environment holds needle, its environment and a way to read
// its command line. The environment of every process is read (status does
// it on every run), so it is read into one buffer, and only a process whose
// environment holds needle costs more.
func eachProcessEnv(needle string, fn func(pid int, env []string, command func() string)) {
	self := os.Getpid()
	buf := make([]byte, 0, 64<<10)
	for _, pid := range procstat.Pids() {
		if pid == self {
			continue
		}
		b, err := readProcFile("/proc/"+strconv.Itoa(pid)+"/environ", buf[:0])
		buf = b[:0]
		if err != nil || !bytes.Contains(b, []byte(needle)) || ProcessStart(pid) == "" {
			continue
		}
		fn(pid, strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"), func() string { return commandLine(pid) })
	}
}

// readProcFile appends the contents of a /proc file to buf: open, read
// until EOF, close (os.ReadFile also stats the file, which for /proc says
// nothing: its size is 0).
func readProcFile(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return buf, err
	}
	defer syscall.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// commandLine is the process's argv joined by spaces.
func commandLine(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// childrenByParent maps each parent pid to its children's.
func childrenByParent() map[int][]int { return procstat.ChildrenByParent() }
