//go:build unix

// Command benchtool is scripts/bench.sh's helper: it writes synthetic
// homes (many session records, very long event logs), times whole
// processes (median wall time and peak RSS), times the demo agent's own
// emission with a bare JSON-RPC reader, turns `go test -bench` output into
// figures, and prints the one table of the benchmark run.
//
//	benchtool sessions -home H -n N -cwd D [-events N] [-word W]
//	benchtool log      -home H -id ID -events N [-cwd D]
//	benchtool measure  -out DIR -name NAME [-runs 5] [-warmup 1] [-prepare SH] [-dir D] [-peer NAME] -- CMD... [::: PEERCMD...]
//	benchtool supervise -out DIR -kandev BIN [-runs 5] [-name supervise] -- AGENT...
//	benchtool emit     -out DIR -name NAME [-runs 5] -cwd D (-load TOKEN | -prompt TEXT) -- AGENT...
//	benchtool gobench  -out DIR < go-test-bench-output
//	benchtool table    DIR
//
// Every measurement is one JSON file NAME.json in DIR; the table reads them,
// so a figure that could not be taken shows as "not available".
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "sessions":
		err = cmdSessions(args)
	case "log":
		err = cmdLog(args)
	case "measure":
		err = cmdMeasure(args)
	case "emit":
		err = cmdEmit(args)
	case "supervise":
		err = cmdSupervise(args)
	case "gobench":
		err = cmdGoBench(args)
	case "table":
		err = cmdTable(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchtool sessions|log|measure|supervise|emit|gobench|table ... (see the package comment)")
	os.Exit(2)
}

// splitDashDash splits args at the first "--".
func splitDashDash(args []string) (before, after []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}
