//go:build unix

package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/testlog"
	"github.com/kandev/kandev/state"
)

// BenchmarkBoardIdle_100Sessions is the CPU time the board uses over 10 s
// with nothing changing, on a home of 100 sessions, drawn in a real
// terminal (tmux): the figure is 0; the metric is in milliseconds.
func BenchmarkBoardIdle_100Sessions(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("SKIP: reads CPU times from /proc")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("SKIP: tmux is not installed")
	}
	home := b.TempDir()
	if _, err := state.OpenHome(home); err != nil {
		b.Fatal(err)
	}
	testlog.WriteHome(b, home, 100, testlog.Home{LogEvents: 8, Locks: true, State: func(i int) string {
		if i%3 == 0 {
			return state.StateCompleted
		}
		return state.StateWaitingForInput
	}})
	sock := filepath.Join(b.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", "board", "-x", "200", "-y", "50", "exec env KANDEV_HOME="+home+" "+kandevBin+" board")
	b.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(tmux("capture-pane", "-p", "-t", "board"), "Warm / idle"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the board never drew")
		}
	}
	pid, err := strconv.Atoi(strings.TrimSpace(tmux("display-message", "-p", "-t", "board", "#{pane_pid}")))
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second) // the first draw settles
	var used time.Duration
	for b.Loop() {
		before := cpuTime(b, pid)
		time.Sleep(10 * time.Second)
		used = cpuTime(b, pid) - before
	}
	b.ReportMetric(float64(used.Microseconds())/1000, "cpu-ms/10s")
}

// cpuTime is the CPU time all threads of process pid have run for
// (schedstat: nanoseconds, finer than the clock ticks of stat).
func cpuTime(b *testing.B, pid int) time.Duration {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no threads of %d: %v", pid, err)
	}
	var total time.Duration
	for _, p := range tasks {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended
		}
		ns, _ := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		total += time.Duration(ns)
	}
	return total
}
