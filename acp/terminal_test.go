package acp

import (
	"strings"
	"testing"
)

func TestTerminalOutput_KeepsTheEndWithinItsLimitAtACharacterBoundary(t *testing.T) {
	for _, c := range []struct {
		limit  int
		writes []string
		want   string
		cut    bool
	}{
		{10, []string{"hello"}, "hello", false},
		{5, []string{"hello", " world"}, "world", true},
		{4, []string{"aé", "bcd"}, "bcd", true}, // "éb" would split é: start after it
		{0, []string{"x"}, "", true},
	} {
		term := &terminal{limit: c.limit}
		for _, w := range c.writes {
			term.Write([]byte(w))
		}
		r := term.output()
		if r.Output != c.want || r.Truncated != c.cut || r.ExitStatus != nil {
			t.Errorf("limit %d, writes %q: got %q truncated=%v", c.limit, c.writes, r.Output, r.Truncated)
		}
	}
	if !strings.Contains(TerminalCommandLine("sh", []string{"-c", "ls"}), "sh -c ls") {
		t.Error("command line")
	}
}
