package e2e_test

import (
	"strings"
	"testing"
)

// The newcomer's breaks of issue 33: each test below drives the built binary
// the way a person new to kandev did when they found the break.

func TestLatest_AnImportedCopyNeverTiesWithItsOriginal(t *testing.T) {
	w := newWorld(t)
	w.env = append(w.env, "CI=1") // nothing lingers
	orig, r := w.start("remember COPY")
	if r.code != 0 {
		t.Fatal(r)
	}
	bundle := w.mustRun("export", "--latest")
	r = w.runInput(bundle.stdout, "import", "-")
	if r.code != 0 {
		t.Fatalf("import: %s", r)
	}
	copyID := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	if copyID == orig || copyID == "" {
		t.Fatalf("import gave id %q (original %s)", copyID, orig)
	}
	// Twice, so a lucky order cannot pass: the choice is the same each time,
	// and it is the row list shows first.
	for i := 0; i < 2; i++ {
		r = w.run("status", "--latest")
		if r.code != 0 {
			t.Fatalf("status --latest after an import into the same home: %s", r)
		}
		if !strings.Contains(r.stderr, "session "+copyID) {
			t.Fatalf("--latest did not pick the imported copy %s:\n%s", copyID, r)
		}
	}
	list := w.mustRun("list")
	if !strings.Contains(strings.SplitN(list.stdout, "\n", 3)[1], copyID) {
		t.Fatalf("list's first row is not the copy --latest picked:\n%s", list.stdout)
	}
	r = w.run("prompt", "--latest", "recall")
	if r.code != 0 || !strings.Contains(r.stdout, "COPY") {
		t.Fatalf("prompt --latest on the copy: %s", r)
	}
}
