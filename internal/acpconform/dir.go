package acpconform

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// Report is what CheckDir found: the violations of each traced
// conversation (by the .out file's name) and how many messages it read.
type Report struct {
	Conversations int
	Messages      int
	// Validated: the messages checked against the schema (every request
	// and answer, and up to 500 notifications of each kind a conversation).
	Validated  int
	Violations map[string][]Violation
}

// CheckDir checks every conversation traced in dir (wiretrace's .in and
// .out pairs) but those whose file name contains skip (none when "").
func (c *Checker) CheckDir(dir, skip string) (Report, error) {
	r := Report{Violations: map[string][]Violation{}}
	outs, err := filepath.Glob(filepath.Join(dir, "*.out"))
	if err != nil {
		return r, err
	}
	sort.Strings(outs)
	var mu sync.Mutex
	var firstErr error
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for outPath := range jobs {
				one, err := c.checkFile(outPath)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				r.add(filepath.Base(outPath), one)
				mu.Unlock()
			}
		}()
	}
	for _, outPath := range outs {
		if skip == "" || !strings.Contains(filepath.Base(outPath), skip) {
			jobs <- outPath
		}
	}
	close(jobs)
	wg.Wait()
	return r, firstErr
}

// checkFile checks the conversation traced in outPath and its .in pair.
func (c *Checker) checkFile(outPath string) (Report, error) {
	var r Report
	out, err := os.ReadFile(outPath)
	if err != nil {
		return r, err
	}
	in, err := os.ReadFile(strings.TrimSuffix(outPath, ".out") + ".in")
	if err != nil && !os.IsNotExist(err) {
		return r, err
	}
	r.Conversations = 1
	r.Messages = len(lines(out))
	vs, validated := c.checkAgentSide(in, out)
	r.Validated = validated
	r.Violations = map[string][]Violation{"": vs}
	return r, nil
}

func (r *Report) add(name string, one Report) {
	r.Conversations += one.Conversations
	r.Messages += one.Messages
	r.Validated += one.Validated
	if vs := one.Violations[""]; len(vs) > 0 {
		r.Violations[name] = vs
	}
}
