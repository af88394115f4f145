//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// calibrate prepares what the operation trials among idx need: the
// template bundles, and each operation's uninterrupted duration (its kill
// points are drawn as fractions of it).
func calibrate(o *options, idx []int) error {
	kinds := map[string]bool{}
	for _, i := range idx {
		if p := makePlan(o, i); p.kind != kindTurn && p.kind != kindTwo && !liveKinds[p.kind] && !failpointKinds[p.kind] && !defaultKinds[p.kind] {
			kinds[p.kind] = true
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	if err := makeTemplates(o); err != nil {
		return err
	}
	o.calib = map[string]time.Duration{}
	var parts []string
	for _, k := range sortedKeys(kinds) {
		// The median of three runs: one run on a loaded machine can be far off.
		var ds []time.Duration
		for j := 0; j < 3; j++ {
			r := execute(o, &plan{idx: -1 - j, kind: k, signal: sigKill, opSessions: 3, agentDelay: opAgentDelay})
			// Only the duration counts here: the trials check the outcome.
			if r.opDur == 0 || r.exitCode != 0 {
				return fmt.Errorf("%s without a kill: %s", k, strings.Join(r.fails, "; "))
			}
			ds = append(ds, r.opDur)
		}
		o.calib[k] = durMedian(ds)
		parts = append(parts, fmt.Sprintf("%s %s", k, o.calib[k].Round(time.Millisecond)))
	}
	fmt.Printf("operations take (uninterrupted, median of 3): %s\n", strings.Join(parts, ", "))
	return nil
}

// makeTemplates exports two sessions of a scratch home: a one-turn one and
// a long one (thousands of events) that import trials bring in with its id.
func makeTemplates(o *options) error {
	r := &runResult{}
	x, err := newRunEnv(o, &plan{idx: -100, kind: kindImport, signal: sigKill}, r, "templates")
	if err != nil {
		return err
	}
	export := func(prompt, to string) (string, int, error) {
		c := x.kandev(cmdTimeout, "start", prompt)
		id := strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
		if c.code != 0 || id == "" {
			return "", 0, fmt.Errorf("start %q: %s", prompt, c.brief())
		}
		e := x.kandev(cmdTimeout, "export", id)
		if e.code != 0 {
			return "", 0, fmt.Errorf("export %s: %s", id, e.brief())
		}
		path := filepath.Join(o.dir, to)
		if err := os.WriteFile(path, []byte(e.stdout), 0o600); err != nil {
			return "", 0, err
		}
		return id, bytes.Count([]byte(e.stdout), []byte("\n")) - 1, nil
	}
	if _, _, err := export("/say a short session to copy", "small.kandev.jsonl"); err != nil {
		return err
	}
	id, n, err := export("/bulk 4000", "big.kandev.jsonl")
	if err != nil {
		return err
	}
	o.tmpl = templates{small: filepath.Join(o.dir, "small.kandev.jsonl"), big: filepath.Join(o.dir, "big.kandev.jsonl"), bigID: id, bigEvents: n}
	return nil
}

func durMedian(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
