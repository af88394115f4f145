package e2e_test

// An agent's question to the person (elicitation/create), on the demo
// agent's /ask: parked under defer and answered with kandev answer,
// declined under the modes that cannot ask, logged and redacted.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func agentSaid(evs []eventlog.Event) string {
	var b strings.Builder
	for _, e := range ofType(evs, eventlog.EventAgentMessage) {
		b.WriteString(e.Content)
	}
	return b.String()
}

func TestQuestion_ParkedUnderDeferAndAnsweredWithKandevAnswerRedactedInTheLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.startWarm("60s", "--permissions", "defer")
	r := w.run("--permissions", "defer", "prompt", id, "/ask Which token should I use?")
	if r.code != 7 || !strings.Contains(r.stderr, "kandev answer "+id+" VALUE") {
		t.Fatalf("a question under defer must park, exit 7 and say how to answer: %s", r)
	}
	var st struct {
		Status struct {
			PermissionRequests []struct {
				ID       string `json:"request_id"`
				Kind     string `json:"kind"`
				ToolName string `json:"tool_name"`
			} `json:"permission_requests"`
		} `json:"status"`
	}
	decodeJSON(t, w.mustRun("status", id, "--json").stdout, &st)
	p := st.Status.PermissionRequests
	if len(p) != 1 || p[0].Kind != "question" || p[0].ToolName != "Which token should I use?" {
		t.Fatalf("status lists the parked question: %+v", p)
	}
	if st := w.mustRun("status", id); !strings.Contains(st.stdout, "waiting   question "+p[0].ID) {
		t.Fatalf("status does not show the question:\n%s", st)
	}
	if r := w.run("approve", id); r.code != 4 {
		t.Fatalf("approve is no answer to a question: %s", r)
	}
	if r := w.run("approve", id, "--request", p[0].ID); r.code != 2 || !strings.Contains(r.stderr, "kandev answer") {
		t.Fatalf("approve naming a question: %s", r)
	}
	secret := "ghp_" + strings.Repeat("Q7w8", 9)
	if r := w.mustRun("answer", id, "--request", p[0].ID, secret); !strings.Contains(r.stdout, "answered "+p[0].ID) {
		t.Fatalf("kandev answer: %s", r)
	}
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	evs := w.events(id)
	if said := agentSaid(evs); !strings.Contains(said, "answer: ") {
		t.Fatalf("the agent did not get the answer: %q", said)
	}
	res := w.resolutions(id)
	if len(res) != 1 || res[0]["action"] != "accept" || res[0]["request_id"] != p[0].ID {
		t.Fatalf("the question's resolution: %+v", res)
	}
	b, _ := os.ReadFile(filepath.Join(w.home, "sessions", id+".jsonl"))
	if strings.Contains(string(b), secret) {
		t.Fatal("the secret answer is in the log")
	}
	if !strings.Contains(string(b), `"tool_kind":"elicitation"`) {
		t.Fatal("the question is not logged as one")
	}
	if r := w.run("answer", id, "blue"); r.code != 4 {
		t.Fatalf("an answer with nothing waiting: %s", r)
	}

	// deny declines the next question.
	if r := w.run("--permissions", "defer", "prompt", id, "/ask Proceed?"); r.code != 7 {
		t.Fatalf("second question: %s", r)
	}
	if r := w.mustRun("deny", id); !strings.Contains(r.stdout, "declined") {
		t.Fatalf("deny of a question: %s", r)
	}
	w.mustRun("wait", id, "--until", "idle", "--timeout", "20s")
	if said := agentSaid(w.events(id)); !strings.Contains(said, "The question was declined.") {
		t.Fatalf("the agent was not told the question was declined: %q", said)
	}
}

func TestQuestion_DeclinedUnderTheModesThatCannotAsk(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "CI=1")
	for _, mode := range []string{"approve-all", "deny-all", "approve-reads", "ask"} {
		id, r := w.start("--permissions", mode, "/ask What now?")
		mustOK(t, r)
		if !strings.Contains(r.stdout, "The question was declined.") {
			t.Fatalf("%s: %s", mode, r)
		}
		if advice := strings.Contains(r.stderr, "--permissions defer and answer with kandev answer"); advice != (mode == "ask") {
			t.Fatalf("%s: the advice to answer with defer is shown %v: %s", mode, advice, r)
		}
		res := w.resolutions(id)
		if len(res) != 1 || res[0]["action"] != "decline" || res[0]["mode"] != mode {
			t.Fatalf("%s: resolution %+v", mode, res)
		}
	}
}
