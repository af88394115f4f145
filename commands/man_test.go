package commands

import (
	"bytes"
	"strings"
	"testing"
)

func TestMan_EveryVisibleCommandHasASectionAndEveryLineIsValidRoff(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"__man", "--date", "2026-12-01"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page := out.String()
	if !strings.HasPrefix(page, `.TH KANDEV 1 "2026\-12\-01" "kandev `) {
		t.Fatalf("page starts %q", page[:min(len(page), 60)])
	}
	for _, cmd := range []string{"start", "prompt", "resume", "status", "demo", "completion", "acp"} {
		if !strings.Contains(page, "\n.SS kandev "+cmd+" ") {
			t.Errorf("no section for kandev %s", cmd)
		}
	}
	for _, hidden := range []string{"__man", "__serve", "__complete"} {
		if strings.Contains(page, hidden) {
			t.Errorf("the page shows the hidden %s", hidden)
		}
	}
	macros := map[string]bool{".TH": true, ".SH": true, ".SS": true, ".PP": true, ".TP": true, ".B": true, ".nf": true, ".fi": true}
	for i, line := range strings.Split(strings.TrimSuffix(page, "\n"), "\n") {
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			if !macros[strings.Fields(line)[0]] {
				t.Errorf("line %d is read as a roff request: %q", i+1, line)
			}
		}
		if strings.Contains(strings.ReplaceAll(line, `\-`, ""), "-") {
			t.Errorf("line %d has an unescaped hyphen: %q", i+1, line)
		}
	}
	for _, want := range []string{`\fB\-\-version\fR`, ".SH EXIT STATUS\n", ".B 130\n", ".B KANDEV_HOME\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
