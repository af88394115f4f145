package commands

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/reference.md is what `kandev __reference` prints: a flag, a command
// or an exit code changed without regenerating the page fails here.
func TestReference_DocsPageMatchesTheCommandModel(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"__reference"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("kandev __reference: exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(filepath.Join("..", "docs", "reference.md"))
	if err != nil {
		t.Fatalf("%v: generate it with `%s`", err, referenceCommand)
	}
	got, want := strings.ReplaceAll(string(b), "\r\n", "\n"), out.String()
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	line := func(l []string) string {
		if i < len(l) {
			return l[i]
		}
		return "(end of page)"
	}
	t.Fatalf("docs/reference.md is stale: regenerate it with `%s` (from the repository root) and commit it.\nline %d of the page: %s\nthe command model: %s",
		referenceCommand, i+1, line(gl), line(wl))
}

func TestReference_NamesEveryVisibleCommandAndExitCode(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"__reference"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page := out.String()
	for _, cmd := range []string{"start", "prompt", "resume", "status", "push", "demo-agent", "acp", "completion"} {
		if !strings.Contains(page, "\n### kandev "+cmd+"\n") {
			t.Errorf("no section for kandev %s", cmd)
		}
	}
	if strings.Contains(page, "kandev __") {
		t.Error("the page shows a hidden command")
	}
	for _, e := range exitCodes {
		if !strings.Contains(page, fmt.Sprintf("\n| %d | ", e.code)) {
			t.Errorf("no row for exit %d", e.code)
		}
	}
	for _, want := range []string{"| 130 | `interrupted` | ", "| 143 | `terminated` | ", "`--json`", "(default `20`)", "(env `KANDEV_HOME`)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestReference_HelpProseLeavesOutTheExamples(t *testing.T) {
	for _, tc := range []struct{ detail, want string }{
		{"Example:\n  kandev demo", ""},
		{"Pages go backwards.\n\nExample:\n  kandev transcript ID", "Pages go backwards."},
		{"Only finished sessions,\nnever a live one.\nExamples:\n  kandev prune", "Only finished sessions, never a live one."},
		{"Example (in CI):\n  kandev recover --all", ""},
		{"Prose and no example.", "Prose and no example."},
	} {
		if got := helpProse(tc.detail); got != tc.want {
			t.Errorf("helpProse(%q) = %q, want %q", tc.detail, got, tc.want)
		}
	}
}
