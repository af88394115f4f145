//go:build unix

package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kandev/kandev/history"
)

// row is one line of the table: a kandev figure against a peer figure (a
// ratio target), or a kandev figure alone (an absolute target).
type row struct {
	pair   string
	kandev string // measurement name
	peer   string // measurement name; "" for an absolute target
	max    float64
	target string
	rss    bool // compare kandev's peak RSS (MiB) with max
	diff   bool // compare kandev's median minus the peer's (ms) with max
}

var rows = []row{
	{pair: "kandev --version (start-up alone)", kandev: "kandev_version", max: 3, target: "<= 3 ms"},
	{pair: "kandev --version  vs  a Go hello world", kandev: "kandev_version", peer: "go_hello", max: 3, target: "<= 3x"},
	{pair: "kandev status --latest, one session", kandev: "kandev_status", max: 3, target: "<= 3 ms"},
	{pair: "kandev list, one session", kandev: "kandev_list", max: 3, target: "<= 3 ms"},
	{pair: "agent launch through the supervisor  vs  direct (/bin/true)", kandev: "supervise_supervised", peer: "supervise_direct", max: 3, target: "<= +3 ms", diff: true},
	{pair: "kandev list  vs  acpx sessions list", kandev: "kandev_list", peer: "acpx_list", max: 1.0 / 50, target: "<= 1/50"},
	{pair: "kandev list  vs  acpx sessions list --local", kandev: "kandev_list", peer: "acpx_list_local", max: 1.0 / 50, target: "<= 1/50"},
	{pair: "kandev status --latest  vs  acpx status", kandev: "kandev_status", peer: "acpx_status", max: 1.0 / 50, target: "<= 1/50"},
	{pair: "prompt turn (/say hello, restores agent)  vs  acpx prompt", kandev: "kandev_prompt", peer: "acpx_prompt", max: 1.0 / 3, target: "<= 1/3"},
	{pair: "kandev prompt  vs  floor client (same SDK, no persistence)", kandev: "kandev_prompt", peer: "floor_prompt", max: 1.15, target: "<= 1.15x"},
	{pair: "kandev prompt  vs  floor client, home on tmpfs (no fsync cost)", kandev: "kandev_prompt_tmpfs", peer: "floor_prompt_tmpfs", max: 1.15, target: "<= 1.15x"},
	{pair: "list --resumable: 10,000 vs 1,000 sessions", kandev: "list_10k", peer: "list_1k", max: 10, target: "<= 10x (linear)"},
	{pair: "list --resumable over 10,000 sessions", kandev: "list_10k", max: 100, target: "<= 100 ms"},
	{pair: "recap --limit 20: 1,000,000 vs 1,000 events", kandev: "recap_1m", peer: "recap_1k", max: 2, target: "<= 2x"},
	{pair: "transcript page (200): 1,000,000 vs 1,000 events", kandev: "transcript_1m", peer: "transcript_1k", max: 2, target: "<= 2x"},
	{pair: "resume context build: 1,000,000 vs 1,000 events (go bench)", kandev: "gobench_ResumeContextFromLog_1M_events", peer: "gobench_ResumeContextFromLog_1k_events", max: 2, target: "<= 2x"},
	{pair: "/bulk 100000 turn (kandev prompt)  vs  agent emit time", kandev: "kandev_bulk", peer: "emit_bulk", max: 1.5, target: "<= 1.5x"},
	{pair: "/bulk 100000 inside a subagent  vs  the same turn in the parent", kandev: "kandev_bulk_child", peer: "kandev_bulk", max: 1.5, target: "<= 1.5x"},
	{pair: "/bulk 100000 inside a subagent  vs  in the parent (go bench, alternating)", kandev: "gobench_BulkTurn_child", peer: "gobench_BulkTurn_parent", max: 1.5, target: "<= 1.5x"},
	{pair: "session/load replaying 100,000 (kandev resume)  vs  agent emit", kandev: "kandev_load", peer: "emit_load", max: 2, target: "<= 2x"},
	{pair: "peak RSS: kandev list --resumable, 10,000 sessions", kandev: "list_10k", max: 64, target: "<= 64 MiB", rss: true},
	{pair: "peak RSS: kandev recap, 1,000,000 events", kandev: "recap_1m", max: 64, target: "<= 64 MiB", rss: true},
	{pair: "peak RSS: kandev transcript, 1,000,000 events", kandev: "transcript_1m", max: 64, target: "<= 64 MiB", rss: true},
	{pair: "peak RSS: kandev prompt (/say hello)", kandev: "kandev_prompt", max: 64, target: "<= 64 MiB", rss: true},
	{pair: "peak RSS: kandev prompt, /bulk 100000 turn", kandev: "kandev_bulk", max: 64, target: "<= 64 MiB", rss: true},
	{pair: "peak RSS: kandev resume, load replaying 100,000", kandev: "kandev_load", max: 64, target: "<= 64 MiB", rss: true},
}

// cmdTable prints the table of the run in DIR, in Markdown.
func cmdTable(args []string) error {
	if len(args) != 1 {
		return errors.New("table: give the results directory")
	}
	dir := args[0]
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| pair\t kandev median\t peer median\t ratio\t target\t met?\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t")
	var missed []string
	for _, r := range rows {
		k, kerr := usable(dir, r.kandev)
		var p *Measurement
		var perr error
		if r.peer != "" {
			p, perr = usable(dir, r.peer)
		}
		cells := []string{r.pair, "", "-", "-", r.target, ""}
		switch {
		case kerr != nil:
			cells[1], cells[5] = "not available", "n/a ("+kerr.Error()+")"
		case r.rss:
			v := float64(k.RSSKiB) / 1024
			cells[1] = fmt.Sprintf("%.1f MiB", v)
			cells[5] = verdict(v <= r.max, &missed, r.pair, fmt.Sprintf("%.1f MiB", v))
		case r.peer == "":
			cells[1] = ms(k.MedianMS)
			cells[5] = verdict(k.MedianMS <= r.max, &missed, r.pair, ms(k.MedianMS))
		case perr != nil:
			cells[1], cells[2], cells[5] = ms(k.MedianMS), "not available", "n/a ("+perr.Error()+")"
		case r.diff:
			d := k.MedianMS - p.MedianMS
			cells[1], cells[2], cells[3] = ms(k.MedianMS), ms(p.MedianMS), fmt.Sprintf("+%.1f ms", d)
			cells[5] = verdict(d <= r.max, &missed, r.pair, fmt.Sprintf("+%.1f ms, target %s", d, r.target))
		default:
			ratio := k.MedianMS / p.MedianMS
			cells[1], cells[2] = ms(k.MedianMS), ms(p.MedianMS)
			cells[3] = ratioText(ratio)
			cells[5] = verdict(ratio <= r.max, &missed, r.pair, fmt.Sprintf("ratio %s, target %s", ratioText(ratio), r.target))
		}
		fmt.Fprintln(tw, "| "+strings.Join(cells, "\t ")+"\t")
	}
	tw.Flush()
	if len(missed) > 0 {
		fmt.Println("\nMissed:")
		for _, m := range missed {
			fmt.Println("  - " + m)
		}
	}
	return nil
}

func usable(dir, name string) (*Measurement, error) {
	m, err := load(dir, name)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, errors.New("not measured")
	case err != nil:
		return nil, err
	case m.Error != "":
		return nil, errors.New(history.Clip(m.Error, 80))
	case m.MedianMS <= 0 && m.RSSKiB <= 0:
		return nil, errors.New("no runs")
	}
	return m, nil
}

func verdict(ok bool, missed *[]string, pair, detail string) string {
	if ok {
		return "yes"
	}
	*missed = append(*missed, pair+": "+detail)
	return "**no**"
}

func ms(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f ms", v)
	case v >= 0.001:
		return fmt.Sprintf("%.1f us", v*1000)
	}
	return fmt.Sprintf("%.1f ns", v*1e6)
}

func ratioText(r float64) string {
	if r < 0.5 && r > 0 {
		return fmt.Sprintf("%.3fx (1/%.0f)", r, 1/r)
	}
	return fmt.Sprintf("%.2fx", r)
}

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)$`)

// cmdGoBench reads `go test -bench -count N` output on stdin, saves the
// median ns/op of each benchmark as gobench_NAME and prints a summary.
func cmdGoBench(args []string) error {
	fs := flag.NewFlagSet("gobench", flag.ExitOnError)
	out := fs.String("out", "", "results directory")
	fs.Parse(args)
	if *out == "" {
		return errors.New("gobench: -out is required")
	}
	type acc struct {
		ns    []float64
		extra string
	}
	byName := map[string]*acc{}
	var order []string
	sc := bufio.NewScanner(os.Stdin)
	pkg := ""
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(rest, "github.com/kandev/kandev/")
		}
		mm := benchLine.FindStringSubmatch(line)
		if mm == nil {
			continue
		}
		name := mm[1]
		v, _ := strconv.ParseFloat(mm[3], 64)
		a := byName[name]
		if a == nil {
			a = &acc{}
			byName[name] = a
			order = append(order, name)
		}
		a.ns = append(a.ns, v)
		a.extra = pkg + ", " + strings.Join(strings.Fields(mm[4]), " ")
		// A metric in milliseconds (b.ReportMetric(x, "parent-ms")) is a
		// figure of its own: NAME/parent.
		f := strings.Fields(mm[4])
		for i := 0; i+1 < len(f); i += 2 {
			unit, ok := strings.CutSuffix(f[i+1], "-ms")
			x, err := strconv.ParseFloat(f[i], 64)
			if !ok || err != nil {
				continue
			}
			sub := name + "/" + unit
			if byName[sub] == nil {
				byName[sub] = &acc{}
				order = append(order, sub)
			}
			byName[sub].ns = append(byName[sub].ns, x*1e6)
			byName[sub].extra = pkg + ", " + f[i+1]
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tmedian/op\truns\tpackage, memory")
	for _, name := range order {
		a := byName[name]
		m := &Measurement{Name: "gobench_" + strings.NewReplacer("/", "_", "=", "_").Replace(name), Command: "go test -bench " + name}
		for _, v := range a.ns {
			m.RunsMS = append(m.RunsMS, v/1e6)
		}
		m.finish()
		m.Note = a.extra
		if err := save(*out, m); err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", name, ms(m.MedianMS), len(a.ns), a.extra)
	}
	tw.Flush()
	return sc.Err()
}
