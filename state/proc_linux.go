package state

import (
	"bytes"
	"os"
	"strconv"
	"strings"
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
	f := statFields(pid)
	// After ')': field 3 (state) is f[0], so field 22 is f[19].
	if len(f) < 20 || string(f[0]) == "Z" { // a zombie is dead for our purposes
		return ""
	}
	return string(f[19])
}

// statFields are the fields of /proc/PID/stat after the command name (which
// may hold spaces and parentheses; fields resume after the last ')').
func statFields(pid int) [][]byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// pids lists the numeric entries of /proc.
func pids() []int {
	ents, _ := os.ReadDir("/proc")
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// eachProcessEnv calls fn with every live process of this user but this
// one, its environment and a way to read its command line.
func eachProcessEnv(fn func(pid int, env []string, command func() string)) {
	self := os.Getpid()
	for _, pid := range pids() {
		if pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || ProcessStart(pid) == "" {
			continue
		}
		fn(pid, strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"), func() string { return commandLine(pid) })
	}
}

// commandLine is the process's argv joined by spaces.
func commandLine(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

func childrenByParent() map[int][]int {
	children := map[int][]int{}
	for _, pid := range pids() {
		f := statFields(pid)
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(string(f[1])); err == nil {
			children[pp] = append(children[pp], pid)
		}
	}
	return children
}
