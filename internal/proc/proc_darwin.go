package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// macOS has no /proc. Process facts come from sysctl: kern.proc.pid and
// kern.proc.all for start time, state and parent, kern.procargs2 for a
// process's argv and environment. sysctl rather than `ps -E`: the kernel
// hands back NUL-separated strings, so an argument with spaces is never
// mistaken for an environment entry, nothing is truncated to a terminal
// width, and no subprocess runs on every status probe.

// szomb is p_stat of a zombie (sys/proc.h).
const szomb = 5

// ProcessStart returns an identifier of when process pid started (its start
// time in seconds and microseconds), so a recorded pid is not confused with a
// later process that reused it. "" if the process does not exist or is a zombie.
func ProcessStart(pid int) string {
	if pid <= 0 {
		return ""
	}
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid || k.Proc.P_stat == szomb {
		return ""
	}
	t := k.Proc.P_starttime
	return strconv.FormatInt(int64(t.Sec), 10) + "." + strconv.FormatInt(int64(t.Usec), 10)
}

// eachProcessEnv calls fn with every live process of this user but this
// one whose environment holds needle, its environment and a way to read its
// command line.
func eachProcessEnv(needle string, fn func(pid int, env []string, command func() string)) {
	all, _ := unix.SysctlKinfoProcSlice("kern.proc.all")
	self := os.Getpid()
	for _, k := range all {
		pid := int(k.Proc.P_pid)
		if pid <= 0 || pid == self || k.Proc.P_stat == szomb {
			continue
		}
		raw, err := unix.SysctlRaw("kern.procargs2", pid)
		if err != nil || !bytes.Contains(raw, []byte(needle)) { // another user's process, or gone, or not one looked for
			continue
		}
		argv, env := parseProcArgs(raw)
		fn(pid, env, func() string { return strings.Join(argv, " ") })
	}
}

func childrenByParent() map[int][]int {
	all, _ := unix.SysctlKinfoProcSlice("kern.proc.all")
	children := map[int][]int{}
	for _, k := range all {
		if k.Proc.P_stat == szomb {
			continue
		}
		children[int(k.Eproc.Ppid)] = append(children[int(k.Eproc.Ppid)], int(k.Proc.P_pid))
	}
	return children
}
