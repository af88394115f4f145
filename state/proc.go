package state

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// ProcessStart returns an identifier of when process pid started (field 22
// of /proc/PID/stat), so a recorded pid is not confused with a later process
// that reused it. "" if the process does not exist.
func ProcessStart(pid int) string {
	if pid <= 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces; fields resume after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := bytes.Fields(b[i+1:])
	// After ')': field 3 is f[0], so field 22 is f[19].
	if len(f) < 20 {
		return ""
	}
	if string(f[0]) == "Z" { // a zombie is dead for our purposes
		return ""
	}
	return string(f[19])
}

// ProcessAlive reports whether pid is alive and is the process that started at start.
func ProcessAlive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	return start == "" || ProcessStart(pid) == start
}
