//go:build unix

// Command crashmatrix is the randomized crash matrix: it interrupts a built
// kandev binary at random points of random demo-agent turns with SIGKILL,
// SIGTERM (once, or twice), SIGHUP or SIGINT, resumes the session, and checks
// the recovery rules for that signal on the event log, the status verdict,
// the exit code and the processes left behind. Other trials SIGKILL kandev
// inside import, prune, repair and stop on prepared sessions and check that
// the home stays consistent, and SIGKILL kandev acp inside an editor's
// session/load of an interrupted session (acp-load).
//
// Every run gets a fresh KANDEV_HOME and cwd. A run's random choices depend
// only on -seed and its index, so `-seed S -only I` replays run I.
//
// Usage:
//
//	go run ./scripts/crashmatrix -kandev /path/to/kandev -n 120 -seed 42
//
// It exits 1 if any invariant failed, printing one line per failed run and
// keeping that run's directory (home + cwd) for inspection.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

type options struct {
	n         int
	seed      uint64
	kandev    string
	jobs      int
	dir       string
	keep      bool
	verbose   bool
	strict    bool
	only      int
	scenarios map[string]bool
	modes     map[string]bool
	kills     map[string]bool
	kinds     map[string]bool
	signals   map[string]bool
	calib     map[string]time.Duration // an operation's uninterrupted duration
	tmpl      templates
}

func main() {
	var o options
	var seed int64
	var scen, modes, kills, kinds, signals string
	flag.IntVar(&o.n, "n", 120, "number of randomized runs")
	flag.Int64Var(&seed, "seed", 0, "random seed (0: derived from the clock; printed in the report)")
	flag.StringVar(&o.kandev, "kandev", "", "path of the kandev binary under test (required)")
	flag.IntVar(&o.jobs, "j", 1, "runs in parallel (each in its own home)")
	flag.StringVar(&o.dir, "dir", "", "directory for the runs' homes (default: a new temp dir)")
	flag.BoolVar(&o.keep, "keep", false, "keep the directories of passing runs too")
	flag.BoolVar(&o.verbose, "v", false, "print one line per run")
	flag.BoolVar(&o.strict, "strict", false, "advisory checks (see the report) count as failures too")
	flag.IntVar(&o.only, "only", -1, "run only this run index (replay one run of a seed)")
	flag.StringVar(&scen, "scenarios", "", "comma-separated scenario names to draw from (default: all)")
	flag.StringVar(&modes, "modes", "", "comma-separated modes to draw from: start,prompt (default: both)")
	flag.StringVar(&kills, "kill", "", "comma-separated kill point classes to draw from: delay and/or event types (default: all)")
	flag.StringVar(&kinds, "trials", "", "comma-separated trial kinds to draw from: "+strings.Join(choiceNames(trialKinds), ",")+" (default: all)")
	flag.StringVar(&signals, "signals", "", "comma-separated signals for turn trials: "+strings.Join(choiceNames(signalKinds), ",")+" (default: all)")
	flag.Parse()
	if o.kandev == "" {
		fmt.Fprintln(os.Stderr, "crashmatrix: -kandev PATH is required (build it with: go build -o /tmp/kandev .)")
		os.Exit(2)
	}
	abs, err := filepath.Abs(o.kandev)
	if err == nil {
		if r, err2 := filepath.EvalSymlinks(abs); err2 == nil {
			abs = r
		}
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		fmt.Fprintf(os.Stderr, "crashmatrix: no kandev binary at %s\n", o.kandev)
		os.Exit(2)
	}
	o.kandev = abs
	if _, err := exec.LookPath("script"); err != nil {
		fmt.Fprintln(os.Stderr, "crashmatrix: `script` (util-linux) is needed for the permission-pending scenario")
		os.Exit(2)
	}
	if seed == 0 {
		seed = time.Now().UnixNano() % 1_000_000_000
	}
	o.seed = uint64(seed)
	if err := o.setFilters(scen, modes, kills, kinds, signals); err != nil {
		fmt.Fprintln(os.Stderr, "crashmatrix:", err)
		os.Exit(2)
	}
	if o.dir == "" {
		o.dir, err = os.MkdirTemp("", fmt.Sprintf("kandev-crashmatrix-%d-", seed))
		if err != nil {
			fmt.Fprintln(os.Stderr, "crashmatrix:", err)
			os.Exit(1)
		}
	} else if err := os.MkdirAll(o.dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "crashmatrix:", err)
		os.Exit(1)
	}
	o.jobs = max(o.jobs, 1)

	var idx []int
	for i := 0; i < o.n; i++ {
		if o.only < 0 || o.only == i {
			idx = append(idx, i)
		}
	}
	fmt.Printf("crashmatrix: %d runs, seed %d, kandev %s, runs in %s\n", len(idx), seed, o.kandev, o.dir)
	began := time.Now()
	if err := calibrate(&o, idx); err != nil {
		fmt.Fprintln(os.Stderr, "crashmatrix: calibrating the operations:", err)
		os.Exit(1)
	}
	results := runAll(&o, idx, began)
	failed := report(&o, results, time.Since(began))
	if failed == 0 && !o.keep {
		os.RemoveAll(o.dir)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func setOf(csv string) map[string]bool {
	if strings.TrimSpace(csv) == "" {
		return nil
	}
	m := map[string]bool{}
	for _, s := range strings.Split(csv, ",") {
		if s = strings.TrimSpace(s); s != "" {
			m[s] = true
		}
	}
	return m
}

// setFilters reads the comma-separated choices of the command line.
func (o *options) setFilters(scen, modes, kills, kinds, signals string) error {
	o.scenarios = setOf(scen)
	o.modes = setOf(modes)
	o.kills = setOf(kills)
	o.kinds = setOf(kinds)
	o.signals = setOf(signals)
	for _, c := range []struct {
		set  map[string]bool
		have []choice
	}{{o.kinds, trialKinds}, {o.signals, signalKinds}} {
		for k := range c.set {
			if !contains(choiceNames(c.have), k) {
				return fmt.Errorf("unknown value %q (have: %s)", k, strings.Join(choiceNames(c.have), ","))
			}
		}
	}
	for k := range o.kills {
		if k != "delay" && !contains(killEvents, k) {
			return fmt.Errorf("unknown kill class %q (have: delay,%s)", k, strings.Join(killEvents, ","))
		}
	}
	for name := range o.scenarios {
		if findScenario(name) == nil {
			return fmt.Errorf("unknown scenario %q (have: %s)", name, scenarioNames())
		}
	}
	return nil
}

// runAll runs the trials idx on o.jobs workers, printing progress.
func runAll(o *options, idx []int, began time.Time) []*runResult {
	results := make([]*runResult, len(idx))
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	done := 0
	for w := 0; w < o.jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= len(idx) {
					return
				}
				p := makePlan(o, idx[k])
				r := execute(o, p)
				mu.Lock()
				results[k] = r
				done++
				if o.verbose {
					fmt.Println(r.line())
				} else if !r.pass() {
					fmt.Printf("FAIL %s\n", r.line())
				} else if done%20 == 0 {
					fmt.Printf("  %d/%d runs done (%s)\n", done, len(idx), time.Since(began).Round(time.Second))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return results
}

// rngFor gives run i its own stream, so a run replays alone with -only.
func rngFor(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)*0x9e3779b97f4a7c15+1))
}
