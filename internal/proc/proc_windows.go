package proc

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows process facts come from the process handle (creation time, exit
// code) and a Toolhelp snapshot (parents). Another process's environment
// is not readable without reading its memory, so eachProcessEnv finds
// nothing: on Windows the agent's tree is held together by a Job Object
// that dies with its owner (acp), not found again by its session tag.

// stillActive is the exit code GetExitCodeProcess reports for a running process.
const stillActive = 259

// ProcessStart returns an identifier of when process pid started (its
// creation time in 100 ns units), so a recorded pid is not confused with a
// later process that reused it. "" if the process does not exist or has exited.
func ProcessStart(pid int) string {
	if pid <= 0 {
		return ""
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(h)
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil || code != stillActive {
		return ""
	}
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return ""
	}
	return strconv.FormatInt(created.Nanoseconds()/100, 10)
}

// processExists reports whether a process pid exists and has not exited
// (one that cannot be opened for lack of rights exists too).
func processExists(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err == windows.ERROR_ACCESS_DENIED {
		return true
	}
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// eachProcessEnv finds no process on Windows (see above).
func eachProcessEnv(string, func(pid int, env []string, command func() string)) {}

// childrenByParent maps each parent pid to its children. Windows does not
// reparent orphans, and pids are reused: a child that started before its
// recorded parent is another process's and is left out.
func childrenByParent() map[int][]int {
	children := map[int][]int{}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return children
	}
	defer windows.CloseHandle(snap)
	type entry struct{ pid, parent int }
	var all []entry
	e := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err := windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if e.ProcessID != 0 {
			all = append(all, entry{int(e.ProcessID), int(e.ParentProcessID)})
		}
	}
	started := map[int]int64{}
	startOf := func(pid int) int64 {
		if t, ok := started[pid]; ok {
			return t
		}
		t, _ := strconv.ParseInt(ProcessStart(pid), 10, 64)
		started[pid] = t
		return t
	}
	for _, c := range all {
		if p, k := startOf(c.parent), startOf(c.pid); p != 0 && k != 0 && k < p {
			continue
		}
		children[c.parent] = append(children[c.parent], c.pid)
	}
	return children
}
