package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// report prints the tables and returns the number of failed runs.
func report(o *options, results []*runResult, elapsed time.Duration) int {
	classes := append([]string{"delay"}, killEvents...)
	type cell struct{ runs, fails int }
	matrix := map[string]map[string]*cell{}
	for _, r := range results {
		row := matrix[r.p.scen.name]
		if row == nil {
			row = map[string]*cell{}
			matrix[r.p.scen.name] = row
		}
		c := row[r.p.killClass()]
		if c == nil {
			c = &cell{}
			row[r.p.killClass()] = c
		}
		c.runs++
		if !r.pass() {
			c.fails++
		}
	}

	fmt.Println()
	fmt.Println("Runs per scenario x kill point (N = runs, N/kF = k of them failed):")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"scenario"}
	for _, c := range classes {
		hdr = append(hdr, shortClass(c))
	}
	hdr = append(hdr, "runs", "pass", "fail")
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	colRuns := map[string]int{}
	totRuns, totFail := 0, 0
	for _, s := range scenarios {
		row := matrix[s.name]
		if row == nil {
			continue
		}
		line := []string{s.name}
		runs, fails := 0, 0
		for _, c := range classes {
			x := row[c]
			switch {
			case x == nil:
				line = append(line, "-")
			case x.fails > 0:
				line = append(line, fmt.Sprintf("%d/%dF", x.runs, x.fails))
			default:
				line = append(line, fmt.Sprint(x.runs))
			}
			if x != nil {
				runs += x.runs
				fails += x.fails
				colRuns[c] += x.runs
			}
		}
		line = append(line, fmt.Sprint(runs), fmt.Sprint(runs-fails), fmt.Sprint(fails))
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
		totRuns += runs
		totFail += fails
	}
	line := []string{"total"}
	for _, c := range classes {
		line = append(line, fmt.Sprint(colRuns[c]))
	}
	line = append(line, fmt.Sprint(totRuns), fmt.Sprint(totRuns-totFail), fmt.Sprint(totFail))
	fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	tw.Flush()

	// Where the kills landed and what resume did.
	outcomes := []string{outNone, outContinued, outPaused, outInitialResent, outMessageResent, outNoSession}
	land := map[string]map[string]int{}
	modes := map[string]int{}
	for _, r := range results {
		if land[r.land] == nil {
			land[r.land] = map[string]int{}
		}
		land[r.land][r.outcome]++
		modes[r.p.mode]++
	}
	fmt.Println()
	fmt.Println("Where the kill landed (from the log) x what the first resume did:")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "landed\t"+strings.Join(outcomes, "\t")+"\taborted\truns\t")
	order := append([]string{}, landOrder...)
	if _, ok := land[""]; ok {
		order = append(order, "")
	}
	for _, l := range order {
		m := land[l]
		if m == nil {
			continue
		}
		name := l
		if name == "" {
			name = "(setup failed)"
		}
		row := []string{name}
		n := 0
		for _, oc := range outcomes {
			row = append(row, dash(m[oc]))
			n += m[oc]
		}
		row = append(row, dash(m["aborted"]))
		n += m["aborted"]
		row = append(row, fmt.Sprint(n))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()

	var durs, rdurs []time.Duration
	var runDurs []time.Duration
	conts, killed, torn, stale, adv := 0, 0, 0, 0, 0
	permBadges := map[string]int{}
	advKinds := map[string]int{}
	for _, r := range results {
		if r.resumeDur > 0 {
			durs = append(durs, r.resumeDur)
		}
		if r.restoreDur > 0 {
			rdurs = append(rdurs, r.restoreDur)
		}
		runDurs = append(runDurs, r.elapsed)
		conts += r.continuations
		if r.land == landPermission && r.preBadge != "" {
			permBadges[r.preBadge]++
		}
		if r.kill.killed {
			killed++
		}
		if r.tornBefore {
			torn++
		}
		if r.staleAgents > 0 {
			stale++
		}
		if len(r.advisories) > 0 {
			adv++
			for _, a := range r.advisories {
				advKinds[advKind(a)]++
			}
		}
	}
	fmt.Println()
	fmt.Printf("seed                         %d\n", o.seed)
	fmt.Printf("runs                         %d (start %d, prompt %d), %d passed, %d failed, wall %s\n",
		len(results), modes["start"], modes["prompt"], len(results)-totFail, totFail, elapsed.Round(time.Second))
	fmt.Printf("kandev SIGKILLed             %d (the other %d had already exited by the kill point)\n", killed, len(results)-killed)
	fmt.Printf("first resume time            median %s, p95 %s, max %s (n=%d)\n", pct(durs, 50), pct(durs, 95), pct(durs, 100), len(durs))
	fmt.Printf("  of which until restored    median %s, p95 %s, max %s (agent_started printed; the rest is the continuation / initial turn)\n", pct(rdurs, 50), pct(rdurs, 95), pct(rdurs, 100))
	fmt.Printf("run time                     median %s, p95 %s\n", pct(runDurs, 50), pct(runDurs, 95))
	fmt.Printf("continuations sent           %d\n", conts)
	if len(permBadges) > 0 {
		var parts []string
		for _, b := range sortedKeys(permBadges) {
			parts = append(parts, fmt.Sprintf("%s %d", b, permBadges[b]))
		}
		fmt.Printf("pre-resume badge, perm open  %s\n", strings.Join(parts, ", "))
	}
	fmt.Printf("torn last line after kill    %d run(s)\n", torn)
	fmt.Printf("agent outlived owner >2s     %d run(s)\n", stale)
	fmt.Printf("advisory findings            %d run(s)", adv)
	if o.strict {
		fmt.Print(" (counted as failures: -strict)")
	}
	fmt.Println()
	for _, k := range sortedKeys(advKinds) {
		fmt.Printf("  %3d x %s\n", advKinds[k], k)
	}
	if adv > 0 {
		fmt.Println()
		fmt.Printf("ADVISORY RUNS (%d):\n", adv)
		for _, r := range results {
			if len(r.advisories) > 0 {
				fmt.Println("  " + r.line())
			}
		}
	}
	if totFail > 0 {
		fmt.Println()
		fmt.Printf("FAILED RUNS (%d), directories kept under %s:\n", totFail, o.dir)
		for _, r := range results {
			if !r.pass() {
				fmt.Println("  " + r.line())
			}
		}
		fmt.Printf("replay run I (timing-dependent): scripts/crash-matrix.sh -n %d -seed %d -only I -v -keep\n", o.n, o.seed)
	} else {
		fmt.Println("\nALL INVARIANTS HELD")
	}
	return totFail
}

func shortClass(c string) string {
	switch c {
	case "permission_requested":
		return "perm_req"
	}
	return c
}

func dash(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// advKind strips the run-specific parts of an advisory.
func advKind(a string) string {
	for _, t := range []string{"t1", "t2", "t3", "t4"} {
		a = strings.ReplaceAll(a, " "+t+" ", " tN ")
	}
	return a
}

func pct(ds []time.Duration, p int) string {
	if len(ds) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (p*len(s)+99)/100 - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i].Round(time.Millisecond).String()
}
