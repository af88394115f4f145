package e2e_test

import (
	"strings"
	"testing"
)

func TestStart_QuietPrintsTheIDThenTheFinalTextAndAStartWithoutPromptSaysWhatNext(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	r := w.mustRun("-q", "start", "remember QUIET")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "QUIET") || w.session(lines[0]) == nil {
		t.Fatalf("-q start: want the id, then the final assistant text:\n%s", r)
	}
	r = w.mustRun("start")
	id := strings.TrimSpace(strings.SplitN(r.stdout, "\n", 2)[0])
	if want := `kandev prompt ` + id + ` "..."`; !strings.Contains(r.stderr, want) {
		t.Fatalf("start without a prompt does not say %q:\n%s", want, r)
	}
}

// The next command status suggests for a warm idle session is a prompt that
// is served at once, not a follow that blocks until the linger ends.
func TestStatus_NextForAWarmSessionIsAPromptThatSucceeds(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("--linger", "30s", "remember WARM")
	if r.code != 0 {
		t.Fatal(r)
	}
	defer w.run("close", id)
	st := w.status(id)
	if st.Status.Reason != "agent_running" || st.Status.Badge != "idle" || st.Status.Next != `kandev prompt `+id+` "..."` {
		t.Fatalf("warm idle status: %+v", st.Status)
	}
	r = w.mustRun("prompt", id, "recall")
	if !strings.Contains(r.stdout, "WARM") {
		t.Fatalf("the suggested prompt: %s", r)
	}
	if r := w.mustRun("resume", id); !strings.Contains(r.stdout, `next: kandev prompt `+id+` "..."`) {
		t.Fatalf("resume of a warm session: %s", r)
	}
	text := w.mustRun("status", id).stdout
	if strings.Contains(text, "needs resume") || !strings.Contains(text, "straight to it") {
		t.Fatalf("status text:\n%s", text)
	}
}
