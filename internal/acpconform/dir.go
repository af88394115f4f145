package acpconform

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Report is what CheckDir found: the violations of each traced
// conversation (by the .out file's name) and how many messages it read.
type Report struct {
	Conversations int
	Messages      int
	Violations    map[string][]Violation
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
	for _, outPath := range outs {
		if skip != "" && strings.Contains(filepath.Base(outPath), skip) {
			continue
		}
		out, err := os.ReadFile(outPath)
		if err != nil {
			return r, err
		}
		in, err := os.ReadFile(strings.TrimSuffix(outPath, ".out") + ".in")
		if err != nil && !os.IsNotExist(err) {
			return r, err
		}
		r.Conversations++
		r.Messages += len(lines(out))
		if vs := c.CheckAgentSide(in, out); len(vs) > 0 {
			r.Violations[filepath.Base(outPath)] = vs
		}
	}
	return r, nil
}
