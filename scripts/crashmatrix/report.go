//go:build unix

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
	var trs, ops, defs []*runResult
	for _, r := range results {
		switch {
		case r.p.kind == kindTurn:
			trs = append(trs, r)
		case defaultKinds[r.p.kind]:
			defs = append(defs, r)
		default:
			ops = append(ops, r)
		}
	}
	if len(trs) > 0 {
		scenarioTable(trs)
		signalTables(trs)
	}
	if len(ops) > 0 {
		opTable(ops)
	}
	if len(defs) > 0 {
		defaultTables(defs)
	}
	return summary(o, results, elapsed)
}

// table prints rows under hdr, right-aligned.
func table(title string, hdr []string, rows [][]string) {
	fmt.Println()
	fmt.Println(title)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
}

// crossTable counts runs by row and column key, in the given orders (keys
// not in them are appended), with a total column.
func crossTable(title, corner string, rs []*runResult, rowOf, colOf func(*runResult) string, rowOrder, colOrder []string) {
	count := map[string]map[string]int{}
	rowsSeen, colsSeen := map[string]bool{}, map[string]bool{}
	for _, r := range rs {
		rk, ck := rowOf(r), colOf(r)
		if count[rk] == nil {
			count[rk] = map[string]int{}
		}
		count[rk][ck]++
		rowsSeen[rk], colsSeen[ck] = true, true
	}
	rowOrder, colOrder = withRest(rowOrder, rowsSeen), withRest(colOrder, colsSeen)
	hdr := append([]string{corner}, colOrder...)
	hdr = append(hdr, "total")
	var rows [][]string
	colTot := map[string]int{}
	for _, rk := range rowOrder {
		row, n := []string{rk}, 0
		for _, ck := range colOrder {
			row = append(row, dash(count[rk][ck]))
			n += count[rk][ck]
			colTot[ck] += count[rk][ck]
		}
		rows = append(rows, append(row, fmt.Sprint(n)))
	}
	tot := []string{"total"}
	for _, ck := range colOrder {
		tot = append(tot, fmt.Sprint(colTot[ck]))
	}
	table(title, hdr, append(rows, append(tot, fmt.Sprint(len(rs)))))
}

// withRest keeps the keys of order that were seen, then the other seen keys sorted.
func withRest(order []string, seen map[string]bool) []string {
	var out []string
	in := map[string]bool{}
	for _, k := range order {
		in[k] = true
		if seen[k] {
			out = append(out, k)
		}
	}
	for _, k := range sortedKeys(seen) {
		if !in[k] {
			out = append(out, k)
		}
	}
	return out
}

func scenarioTable(rs []*runResult) {
	classes := append([]string{"delay"}, killEvents...)
	var names []string
	for _, s := range scenarios {
		names = append(names, s.name)
	}
	crossTable("Turn trials per scenario x kill point:", "scenario", rs,
		func(r *runResult) string { return r.p.scen.name },
		func(r *runResult) string { return shortClass(r.p.killClass()) }, names, mapStrings(classes, shortClass))
}

func signalTables(rs []*runResult) {
	sigs := choiceNames(signalKinds)
	bySig := func(r *runResult) string { return r.p.signal }
	crossTable("Where the signal landed (phase, from the log for SIGKILL, else from what kandev had printed):", "landed", rs,
		func(r *runResult) string { return orNone(r.land, "(setup failed)") }, bySig, landOrder, sigs)
	crossTable("Last event kandev printed before the signal:", "event", rs,
		func(r *runResult) string { return orNone(r.lastEvent, "(none)") }, bySig, killEvents, sigs)
	crossTable("Exit code of the signalled kandev (137 = died of SIGKILL):", "exit", rs,
		func(r *runResult) string {
			if !r.kill.killed {
				return "exited first"
			}
			return fmt.Sprint(r.exitCode)
		}, bySig, []string{"0", "130", "137", "143", "exited first"}, sigs)
	outcomes := []string{outNone, outContinued, outPaused, outInitialResent, outMessageResent, outNoSession, "aborted"}
	crossTable("What the first resume did, per signal:", "outcome", rs,
		func(r *runResult) string { return r.outcome }, bySig, outcomes, sigs)
}

func opTable(rs []*runResult) {
	crossTable("Operation trials: where the SIGKILL landed (from the home it left):", "operation", rs,
		func(r *runResult) string { return r.p.kind },
		func(r *runResult) string { return orNone(r.land, "(setup failed)") },
		[]string{kindImport, kindPrune, kindRepair, kindStop, kindACPLoad, kindApprove, kindParked, kindExpiry}, append(opLandOrder, landPermission, landAfterEnd))
}

// defaultTables: where the signal landed and how the command exited, per
// target (the following command, the detached owner) and signal.
func defaultTables(rs []*runResult) {
	target := func(r *runResult) string { return r.p.kind + " " + r.p.signal }
	crossTable("Default-path trials (detached owner): where the signal landed, per target and signal:", "target signal", rs,
		target, func(r *runResult) string { return orNone(r.land, "(setup failed)") }, nil, landOrder)
	crossTable("Default-path trials: exit code of the following command:", "target signal", rs,
		target, func(r *runResult) string {
			if !r.kill.killed {
				return "exited first"
			}
			return fmt.Sprint(r.exitCode)
		}, nil, []string{"0", "130", "137", "143", "exited first"})
}

func mapStrings(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
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

// summary prints the figures and the failed runs; it returns how many failed.
func summary(o *options, results []*runResult, elapsed time.Duration) int {
	var resumeDurs, restoreDurs, runDurs []time.Duration
	stopDurs := map[string][]time.Duration{}
	delivered, torn, stale, adv, failed, conts := 0, 0, 0, 0, 0, 0
	advKinds := map[string]int{}
	for _, r := range results {
		if r.resumeDur > 0 {
			resumeDurs = append(resumeDurs, r.resumeDur)
		}
		if r.restoreDur > 0 {
			restoreDurs = append(restoreDurs, r.restoreDur)
		}
		runDurs = append(runDurs, r.elapsed)
		if r.kill.killed {
			delivered++
			if r.p.kind == kindTurn && r.stopDur > 0 {
				stopDurs[r.p.signal] = append(stopDurs[r.p.signal], r.stopDur)
			}
		}
		conts += r.continuations
		if r.tornBefore {
			torn++
		}
		if r.staleAgents > 0 {
			stale++
		}
		if !r.pass() {
			failed++
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
	fmt.Printf("runs                         %d, %d passed, %d failed (violations), wall %s\n", len(results), len(results)-failed, failed, elapsed.Round(time.Second))
	fmt.Printf("signals delivered            %d (the other %d runs' kandev had exited before its kill point)\n", delivered, len(results)-delivered)
	fmt.Printf("first resume time            median %s, p95 %s, max %s (n=%d)\n", pct(resumeDurs, 50), pct(resumeDurs, 95), pct(resumeDurs, 100), len(resumeDurs))
	fmt.Printf("  of which until restored    median %s, p95 %s, max %s (agent_started printed)\n", pct(restoreDurs, 50), pct(restoreDurs, 95), pct(restoreDurs, 100))
	for _, s := range choiceNames(signalKinds) {
		if d := stopDurs[s]; len(d) > 0 {
			fmt.Printf("exit after %-17s median %s, p95 %s, max %s (n=%d)\n", s, pct(d, 50), pct(d, 95), pct(d, 100), len(d))
		}
	}
	if len(o.calib) > 0 {
		var parts []string
		for _, k := range sortedKeys(o.calib) {
			parts = append(parts, fmt.Sprintf("%s %s", k, o.calib[k].Round(time.Millisecond)))
		}
		fmt.Printf("operations (uninterrupted)   %s\n", strings.Join(parts, ", "))
	}
	fmt.Printf("run time                     median %s, p95 %s\n", pct(runDurs, 50), pct(runDurs, 95))
	fmt.Printf("continuations sent           %d\n", conts)
	fmt.Printf("torn last line after signal  %d run(s)\n", torn)
	fmt.Printf("agent outlived owner >2s     %d run(s)\n", stale)
	fmt.Printf("advisory findings            %d run(s)", adv)
	if o.strict {
		fmt.Print(" (counted as failures: -strict)")
	}
	fmt.Println()
	for _, k := range sortedKeys(advKinds) {
		fmt.Printf("  %3d x %s\n", advKinds[k], k)
	}
	listRuns(o, results, failed)
	return failed
}

func listRuns(o *options, results []*runResult, failed int) {
	for _, r := range results {
		if len(r.advisories) > 0 && o.verbose {
			fmt.Println("  advisory: " + r.line())
		}
	}
	if failed == 0 {
		fmt.Println("\nALL INVARIANTS HELD")
		return
	}
	fmt.Println()
	fmt.Printf("FAILED RUNS (%d), directories kept under %s:\n", failed, o.dir)
	for _, r := range results {
		if !r.pass() {
			fmt.Println("  " + r.line())
		}
	}
	fmt.Printf("replay run I (timing-dependent): scripts/crash-matrix.sh -n %d -seed %d -only I -v -keep\n", o.n, o.seed)
}
