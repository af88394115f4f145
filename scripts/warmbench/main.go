// Command warmbench measures what a warm (lingering) owner saves: the
// wall time of `kandev prompt` in a new process against a session whose
// agent is kept warm, and against one whose agent must start again (cold),
// on the demo agent made slow to start with --start-delay. It also reports
// the time from the turn's turn_ended line in the log to the command's exit,
// on the demo agent and on the demo agent with --ignore-eof (an agent that,
// like Claude's and codex's adapters, does not exit when its stdin closes).
// Then, on a pseudo-terminal (terminal.go): how soon a permission question
// appears after the agent's request reaches the turn's owner, and how soon
// Ctrl-C ends the command with the turn cancelled, wherever the owner runs.
//
//	go run ./scripts/warmbench -kandev ./kandev -start-delay 1000 -runs 5
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	bin := flag.String("kandev", "kandev", "the kandev binary")
	delay := flag.Int("start-delay", 1000, "demo agent --start-delay (ms)")
	runs := flag.Int("runs", 5, "timed prompts per mode (the median is reported)")
	terminal := flag.Bool("terminal", true, "also measure ask and Ctrl-C on a pseudo-terminal (Linux)")
	baseline := flag.String("baseline", "", "another kandev binary (an earlier build): time its warm prompt against this one's, alternately")
	flag.Parse()
	abs, err := exec.LookPath(*bin)
	if err == nil {
		abs, err = filepath.Abs(abs)
	}
	if err != nil {
		fail(err)
	}
	home, err := os.MkdirTemp("", "kandev-warmbench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(home)
	cfg := fmt.Sprintf("[agents.slow]\ncommand = [%q, \"demo-agent\", \"--start-delay\", \"%d\"]\n", abs, *delay) +
		fmt.Sprintf("[agents.fast]\ncommand = [%q, \"demo-agent\"]\n", abs) +
		fmt.Sprintf("[agents.deaf]\ncommand = [%q, \"demo-agent\", \"--start-delay\", \"%d\", \"--ignore-eof\"]\nexit_on_eof = false\n", abs, *delay)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		fail(err)
	}
	k := kandev{bin: abs, home: home}
	fmt.Printf("demo agent with --start-delay %d ms, %d prompts each, medians\n\n", *delay, *runs)
	fmt.Printf("%-22s %-6s %12s %22s\n", "agent", "mode", "prompt wall", "turn_ended -> exit")
	for _, agent := range []string{"slow", "deaf"} {
		k.bench(agent, *runs)
	}
	if *baseline != "" {
		k.againstBaseline(*baseline, cfg, *runs)
	}
	if *terminal {
		k.terminalFigures(*runs)
	}
}

// bench times runs cold and runs warm prompts to agent and prints the medians.
func (k kandev) bench(agent string, runs int) {
	var cold, warm time.Duration
	name := map[string]string{"slow": "demo", "deaf": "demo --ignore-eof"}[agent]
	for _, linger := range []string{"0s", "10m"} {
		id := k.mustOut("start", "--agent", agent, "--linger", linger, "hello")
		id = strings.TrimSpace(strings.SplitN(id, "\n", 2)[0])
		var walls, tails []time.Duration
		for range runs {
			t0 := time.Now()
			k.mustOut("prompt", id, "--linger", linger, "/say measured")
			end := time.Now()
			walls = append(walls, end.Sub(t0))
			tails = append(tails, end.Sub(lastTurnEnded(k.home, id)))
		}
		mode := map[string]string{"0s": "cold", "10m": "warm"}[linger]
		fmt.Printf("%-22s %-6s %12s %22s\n", name, mode, median(walls).Round(time.Millisecond), median(tails).Round(time.Millisecond))
		if mode == "cold" {
			cold = median(walls)
		} else {
			warm = median(walls)
			k.mustOut("close", id)
		}
	}
	fmt.Printf("%-22s warm / cold = %.3f\n", name, float64(warm)/float64(cold))
}

// againstBaseline times a warm prompt of this build and of the baseline
// binary, alternately (each with its own home and warm owner), so that both
// see the same machine load.
func (k kandev) againstBaseline(bin, cfg string, runs int) {
	home, err := os.MkdirTemp("", "kandev-warmbench-base-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(home)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		fail(err)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		fail(err)
	}
	base := kandev{bin: abs, home: home}
	ids := map[kandev]string{}
	for _, x := range []kandev{k, base} {
		id := x.mustOut("start", "--agent", "slow", "--linger", "10m", "hello")
		ids[x] = strings.TrimSpace(strings.SplitN(id, "\n", 2)[0])
	}
	walls := map[kandev][]time.Duration{}
	for range 2 * runs {
		for _, x := range []kandev{k, base} {
			t0 := time.Now()
			x.mustOut("prompt", ids[x], "--linger", "10m", "/say measured")
			walls[x] = append(walls[x], time.Since(t0))
		}
	}
	for _, x := range []kandev{k, base} {
		x.mustOut("close", ids[x])
	}
	fmt.Printf("\nwarm prompt, this build against %s, %d prompts each, alternately, medians\n", bin, 2*runs)
	fmt.Printf("this build %s, baseline %s, ratio %.2f\n", median(walls[k]).Round(100*time.Microsecond), median(walls[base]).Round(100*time.Microsecond), float64(median(walls[k]))/float64(median(walls[base])))
}

type kandev struct{ bin, home string }

func (k kandev) mustOut(args ...string) string {
	cmd := exec.Command(k.bin, append([]string{"--home", k.home}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Errorf("kandev %s: %v\n%s", strings.Join(args, " "), err, out))
	}
	return string(out)
}

// lastTurnEnded is the timestamp of the last turn_ended line of the log.
func lastTurnEnded(home, id string) time.Time {
	f, err := os.Open(filepath.Join(home, "sessions", id+".jsonl"))
	if err != nil {
		fail(err)
	}
	defer f.Close()
	var last time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct{ Type, Timestamp string }
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "turn_ended" {
			last, _ = time.Parse(time.RFC3339Nano, e.Timestamp)
		}
	}
	return last
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "warmbench:", err)
	os.Exit(1)
}
