// Command testsum reads `go test -json` on stdin and prints what plain
// `go test` prints (each package's result line, and the output of every
// test that failed), then the slowest tests of the run: a CI log that says
// what failed and where the minutes went.
//
//	go test -json ./... | go run ./scripts/testsum
//
// It exits 1 when a test or a package failed, or when the input ended
// without a package result (go test itself failed).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	name    string
	elapsed float64
}

// sum keeps each running test's output until it is known whether it failed.
type sum struct {
	out     io.Writer
	pending map[string]*strings.Builder // package + "\x00" + test
	slow    []timing
	failed  bool
}

func main() {
	s := &sum{out: os.Stdout, pending: map[string]*strings.Builder{}}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(s.out, sc.Text()) // a build error, not test2json
			s.failed = true
			continue
		}
		s.add(e)
	}
	s.printSlowest(20)
	if s.failed {
		os.Exit(1)
	}
}

func (s *sum) add(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "output":
		b := s.pending[key]
		if b == nil {
			b = &strings.Builder{}
			s.pending[key] = b
		}
		if e.Test != "" || !strings.HasPrefix(e.Output, "=== ") {
			b.WriteString(e.Output)
		}
	case "pass", "skip":
		if e.Test == "" {
			s.flushPackage(key, false)
			return
		}
		s.done(key, e)
	case "fail":
		s.failed = true
		if e.Test == "" {
			s.flushPackage(key, true)
			return
		}
		fmt.Fprint(s.out, s.pending[key].String())
		s.done(key, e)
	}
}

func (s *sum) done(key string, e event) {
	delete(s.pending, key)
	if !strings.Contains(e.Test, "/") {
		s.slow = append(s.slow, timing{e.Package[strings.LastIndex(e.Package, "/")+1:] + "." + e.Test, e.Elapsed})
	}
}

// flushPackage prints the package's own lines: its result, and on a
// failure everything it printed outside a test (a panic, a timeout).
func (s *sum) flushPackage(key string, failed bool) {
	b := s.pending[key]
	delete(s.pending, key)
	if b == nil {
		return
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if failed || strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "?   ") ||
			strings.HasPrefix(line, "ACP conformance") || strings.HasPrefix(line, "FAIL") {
			fmt.Fprint(s.out, line)
		}
	}
}

func (s *sum) printSlowest(n int) {
	sort.Slice(s.slow, func(i, j int) bool { return s.slow[i].elapsed > s.slow[j].elapsed })
	if len(s.slow) < n {
		n = len(s.slow)
	}
	fmt.Fprintf(s.out, "slowest %d tests:\n", n)
	for _, t := range s.slow[:n] {
		fmt.Fprintf(s.out, "  %7.1fs  %s\n", t.elapsed, t.name)
	}
}
