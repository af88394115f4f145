// Package procstat reads process facts from /proc on Linux (procstat_linux.go)
// and walks a process tree on every platform. It imports only early standard
// packages (bytes, os, strconv), so the agent's supervisor
// (internal/supervise), which runs from package initialisation before most
// of the binary, can use it as state does.
package procstat

// Below lists the pids under pid in the tree that children describes (each
// parent's pid to its children's), parents before their children.
func Below(children map[int][]int, pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}
