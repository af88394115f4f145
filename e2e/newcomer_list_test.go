package e2e_test

// What a newcomer tripped on, each as they met it: the command, its output,
// its exit code.

import (
	"strings"
	"testing"
)

func TestStatus_NextOfAParkedQuestionIsKandevAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "--permissions", "defer")
	if r := w.run("--permissions", "defer", "prompt", id, "/ask Which colour?"); r.code != 7 {
		t.Fatalf("a question under defer parks (exit 7): %s", r)
	}
	var st struct {
		Status struct {
			Next string `json:"next"`
		} `json:"status"`
	}
	decodeJSON(t, w.mustRun("status", id, "--json").stdout, &st)
	if want := "kandev answer " + id + " VALUE"; st.Status.Next != want {
		t.Fatalf("status --json next is %q, want %q", st.Status.Next, want)
	}
	text := w.mustRun("status", id).stdout
	if !strings.Contains(text, "next      kandev answer "+id+" VALUE") || !strings.Contains(text, "kandev deny "+id) {
		t.Fatalf("status names kandev answer (and deny) next:\n%s", text)
	}
	// What it names works.
	if r := w.mustRun("answer", id, "blue"); !strings.Contains(r.stdout, "answered") {
		t.Fatalf("kandev answer: %s", r)
	}
}
