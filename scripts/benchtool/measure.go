//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kandev/kandev/history"
)

// Measurement is one figure of the run: the median of timed runs and the
// peak memory of the measured process.
type Measurement struct {
	Name     string    `json:"name"`
	Command  string    `json:"command,omitempty"`
	RunsMS   []float64 `json:"runs_ms,omitempty"`
	MedianMS float64   `json:"median_ms"`
	MinMS    float64   `json:"min_ms,omitempty"`
	MaxMS    float64   `json:"max_ms,omitempty"`
	// RSSKiB is the measured process's own peak resident set (VmHWM sampled
	// every 2 ms in one extra run; the wait4 maxrss when that run was too
	// short to sample, which for a process without children is exact).
	RSSKiB int64  `json:"rss_kib,omitempty"`
	Note   string `json:"note,omitempty"`
	Error  string `json:"error,omitempty"`
}

func (m *Measurement) finish() {
	if len(m.RunsMS) == 0 {
		return
	}
	s := slices.Clone(m.RunsMS)
	slices.Sort(s)
	m.MinMS, m.MaxMS = s[0], s[len(s)-1]
	if len(s)%2 == 1 {
		m.MedianMS = s[len(s)/2]
	} else {
		m.MedianMS = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
}

func save(dir string, m *Measurement) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, m.Name+".json"), append(b, '\n'), 0o644)
}

func load(dir, name string) (*Measurement, error) {
	b, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		return nil, err
	}
	var m Measurement
	return &m, json.Unmarshal(b, &m)
}

// cmdMeasure times a command: warm-up runs, then timed runs, each after the
// prepare command; then one untimed run with memory sampling. With -peer,
// the words after ":::" are a second command measured in the same loop,
// run for run in turn with the first, so that a ratio of the two compares
// runs that saw the same machine (other work on a shared machine moves
// figures taken one after the other by more than the ratio's target).
func cmdMeasure(args []string) error {
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	out := fs.String("out", "", "results directory")
	name := fs.String("name", "", "measurement name")
	peerName := fs.String("peer", "", "measurement name of the command after :::, run in turn with the first")
	runs := fs.Int("runs", 5, "timed runs")
	warmup := fs.Int("warmup", 1, "untimed runs first")
	prepare := fs.String("prepare", "", "shell command run before every run (untimed)")
	dir := fs.String("dir", "", "working directory")
	note := fs.String("note", "", "note for the table")
	flags, cmdline := splitDashDash(args)
	fs.Parse(flags)
	var peerline []string
	for i, a := range cmdline {
		if a == ":::" {
			cmdline, peerline = cmdline[:i], cmdline[i+1:]
			break
		}
	}
	if *out == "" || *name == "" || len(cmdline) == 0 || (*peerName == "") != (len(peerline) == 0) {
		return errors.New("measure: -out, -name and a command after -- are required; -peer goes with a second command after a ::: separator")
	}
	ms := []*Measurement{{Name: *name, Command: strings.Join(cmdline, " "), Note: *note}}
	lines := [][]string{cmdline}
	if *peerName != "" {
		ms = append(ms, &Measurement{Name: *peerName, Command: strings.Join(peerline, " ")})
		lines = append(lines, peerline)
	}
	for _, m := range ms {
		fmt.Fprintf(os.Stderr, "  measuring %-28s %s\n", m.Name, history.Clip(m.Command, 100))
	}
	for i := 0; i < *warmup+*runs+1; i++ {
		for j, m := range ms {
			if m.Error != "" {
				continue
			}
			if *prepare != "" {
				if b, err := exec.Command("sh", "-c", *prepare).CombinedOutput(); err != nil {
					m.Error = fmt.Sprintf("prepare failed: %v: %s", err, history.Clip(string(b), 300))
					continue
				}
			}
			sample := i == *warmup+*runs
			r := runOnce(lines[j], *dir, sample)
			if r.err != nil {
				m.Error = r.err.Error()
				continue
			}
			switch {
			case sample:
				m.RSSKiB = r.rss
			case i >= *warmup:
				m.RunsMS = append(m.RunsMS, r.wall.Seconds()*1000)
			}
		}
	}
	for _, m := range ms {
		m.finish()
		if m.Error != "" {
			fmt.Fprintf(os.Stderr, "  %s: %s\n", m.Name, m.Error)
		}
		if err := save(*out, m); err != nil {
			return err
		}
	}
	return nil
}

type runResult struct {
	wall time.Duration
	rss  int64 // KiB
	err  error
}

// runOnce runs the command with stdout discarded. With sample set it polls
// the process's VmHWM; otherwise nothing runs beside it.
func runOnce(cmdline []string, dir string, sample bool) runResult {
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return runResult{err: err}
	}
	var hwm int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	if sample {
		go func() {
			defer close(sampled)
			path := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for {
				if v := vmHWM(path); v > hwm {
					hwm = v
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
	} else {
		close(sampled)
	}
	err := cmd.Wait()
	wall := time.Since(start)
	close(stop)
	<-sampled
	if err != nil {
		return runResult{err: fmt.Errorf("%s: %v: %s", strings.Join(cmdline, " "), err, history.Clip(lastLine(stderr.String()), 300))}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && hwm == 0 {
		hwm = ru.Maxrss
	}
	return runResult{wall: wall, rss: hwm}
}

// vmHWM reads the peak resident set of a live process, in KiB (0 if gone).
func vmHWM(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			v, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return v
		}
	}
	return 0
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
