package procstat

import (
	"bytes"
	"os"
	"strconv"
)

// Fields are the fields of /proc/PID/stat after the command name (which may
// hold spaces and parentheses; fields resume after the last ')'), so field 3
// (the state) is Fields[0]; nil when the process does not exist.
func Fields(pid int) [][]byte {
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

// Start is field 22 of /proc/PID/stat (when the process started), "" for a
// process that does not exist or is a zombie (dead for every caller here).
func Start(pid int) string {
	f := Fields(pid)
	if len(f) < 20 || string(f[0]) == "Z" {
		return ""
	}
	return string(f[19])
}

// Pids lists the numeric entries of /proc: every process's pid.
func Pids() []int {
	ents, _ := os.ReadDir("/proc")
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// ChildrenByParent maps each parent pid to its children's (field 4 of
// /proc/PID/stat), for Below.
func ChildrenByParent() map[int][]int {
	children := map[int][]int{}
	for _, pid := range Pids() {
		if f := Fields(pid); len(f) >= 2 {
			if pp, err := strconv.Atoi(string(f[1])); err == nil {
				children[pp] = append(children[pp], pid)
			}
		}
	}
	return children
}
