// Package proc probes processes: whether one is still the process that
// started at a given time, and which carry a session's tag in their environment.
package proc

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kandev/kandev/internal/procstat"
)

// SessionTagEnv is the environment variable that tags an agent and every
// process it starts with its session id: children inherit the environment,
// so a scan finds them even after they were reparented away from the agent.
const SessionTagEnv = "KANDEV_SESSION_ID"

// Proc is a live process found by a scan.
type Proc struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
}

// ProcessAlive reports whether pid is alive and is the process that started at start.
func ProcessAlive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	if !processExists(pid) {
		return false
	}
	return start == "" || ProcessStart(pid) == start
}

// AliveAfter reports whether pid (the process that started at start) is
// still alive after up to d: for a process that is expected to exit, such as
// an agent's supervisor moments after its owner died.
func AliveAfter(pid int, start string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for ProcessAlive(pid, start) {
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// TaggedProcesses lists the live processes (zombies excluded, this process
// excluded) whose environment carries SessionTagEnv, by session id, each
// list ordered by pid. Only processes of the home at dir count: one whose
// KANDEV_HOME names another home belongs to a session of that home (a copy
// of a home, or an imported bundle, can hold the same id). Processes of other
// users are not visible.
func TaggedProcesses(dir string) map[string][]Proc {
	out := map[string][]Proc{}
	eachProcessEnv(SessionTagEnv+"=", func(pid int, env []string, command func() string) {
		id, home := "", ""
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, SessionTagEnv+"="); ok && id == "" {
				id = v
			}
			if v, ok := strings.CutPrefix(kv, "KANDEV_HOME="); ok && home == "" {
				home = v
			}
		}
		if id != "" && (home == "" || filepath.Clean(home) == filepath.Clean(dir)) {
			out[id] = append(out[id], Proc{PID: pid, Command: command()})
		}
	})
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	}
	return out
}

// ProcessesWithEnv lists the live processes (this one excluded) whose
// environment holds the entry kv ("NAME=value").
func ProcessesWithEnv(kv string) []int {
	var out []int
	eachProcessEnv(kv, func(pid int, env []string, _ func() string) {
		if slices.Contains(env, kv) {
			out = append(out, pid)
		}
	})
	return out
}

// Descendants lists the pids below pid in the process tree, parents before
// their children.
func Descendants(pid int) []int { return procstat.Below(childrenByParent(), pid) }
