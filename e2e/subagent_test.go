package e2e_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// Subagents on the demo agent (/subagent, /subagent-bg), on the default
// path: a detached owner that lingers.

func childEvents(evs []eventlog.Event, child string) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		if e.ChildID != "" && (child == "" || e.ChildID == child) {
			out = append(out, e)
		}
	}
	return out
}

// startSubagentWorld starts a session in a world of its own on the default
// path (a detached owner that lingers, closed when the test ends), with
// kandev start ARGS, which must succeed; r is what start printed.
func startSubagentWorld(t *testing.T, args ...string) (*world, string, result) {
	t.Helper()
	w := newWorld(t)
	id, r := w.start(args...)
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	return w, id, r
}

func TestSubagent_AForegroundChildIsRecordedApartFromItsParent(t *testing.T) {
	t.Parallel()
	w, id, _ := startSubagentWorld(t, "/subagent scout /say found it;/think looking\n/say back from scout")
	evs := w.events(id)
	kids := childEvents(evs, "")
	var types []string
	for _, e := range kids {
		if len(types) == 0 || types[len(types)-1] != e.Type {
			types = append(types, e.Type)
		}
	}
	want := "child_started child_message child_thought child_ended child_message"
	if strings.Join(types, " ") != want {
		t.Fatalf("child events %v, want %s", types, want)
	}
	child := kids[0].ChildID
	if !strings.Contains(string(kids[0].Data), `"name":"scout"`) {
		t.Fatalf("child_started %s", kids[0].Data)
	}
	ended := ofType(kids, eventlog.EventChildEnded)
	if len(ended) != 1 || ended[0].State != "completed" {
		t.Fatalf("child end %+v", ended)
	}
	turn := lastTurn(evs)
	if got := agentText(evs, turn); got != "back from scout" {
		t.Fatalf("the parent's text %q has the child's in it, or lost its own", got)
	}
	for _, e := range kids {
		if e.TurnID != turn || e.ChildID != child {
			t.Fatalf("child event outside its turn or child: %+v", e)
		}
	}
	if m := ofType(evs, eventlog.EventMarker); len(m) > 0 {
		for _, e := range m {
			if e.Kind == "subagent_input" {
				t.Fatalf("a warning on good input: %+v", e)
			}
		}
	}
}

func TestSubagent_AChildRunningWhenItsOwnerIsKilledIsUnknownAndTheContinuationNamesIt(t *testing.T) {
	t.Parallel()
	w, id, _ := startSubagentWorld(t, "--permissions", "approve-all", "/say ready")
	b := w.spawn("prompt", "--permissions", "approve-all", id, "/subagent scout /write notes.txt hello;/sleep 60000;/say never")
	evs := w.waitForEvents(id, "the child's write", func(evs []eventlog.Event) bool {
		for _, e := range evs {
			if e.Type == eventlog.EventChildToolResult && e.ToolStatus == "completed" {
				return true
			}
		}
		return false
	})
	child := childEvents(evs, "")[0].ChildID
	if pid := w.session(id).OwnerPID; pid > 0 {
		kill(pid, syscall.SIGKILL)
	}
	b.cmd.Process.Kill()
	<-b.done
	waitFor(t, 10*time.Second, "the killed owner to be gone", func() bool { return !w.ownerAlive(id) })
	killSurvivors(w.home, id)

	if r := w.run("resume", "--permissions", "approve-all", id); r.code != 0 {
		t.Fatalf("resume: %s", r)
	}
	evs = w.events(id)
	ended := ofType(childEvents(evs, child), eventlog.EventChildEnded)
	if len(ended) != 1 || ended[0].State != "unknown" {
		t.Fatalf("the child's end after the crash: %+v", ended)
	}
	cont := continuationTurns(evs)
	if len(cont) != 1 {
		t.Fatalf("%d continuations", len(cont))
	}
	var prompt string
	for _, e := range evs {
		if e.Type == eventlog.EventUserMessage && e.TurnID == cont[0].TurnID {
			prompt = e.Content
		}
	}
	for _, want := range []string{`subagent "scout" (id ` + child + `)`, "Write notes.txt", "check what their side-effecting tool calls already did"} {
		if !strings.Contains(prompt, want) {
			t.Fatalf("the continuation lacks %q:\n%s", want, prompt)
		}
	}
}

func TestSubagent_StatusAndTranscriptShowTheChildUnderWhatStartedIt(t *testing.T) {
	t.Parallel()
	w, id, r := startSubagentWorld(t, "--permissions", "approve-all", "/say delegating\n/subagent scout /write notes.txt hello;/say wrote the notes\n/say scout is done")
	if !strings.Contains(r.stdout, "[subagent] scout (") || !strings.Contains(r.stdout, " completed") {
		t.Fatalf("the turn's stream does not show the child:\n%s", r.stdout)
	}
	var st struct {
		Children []struct {
			ID, Name, State, Prompt string
			ToolCalls               []struct{ Name, Status string } `json:"tool_calls"`
		} `json:"children"`
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if len(st.Children) != 1 {
		t.Fatalf("children %+v", st.Children)
	}
	c := st.Children[0]
	if c.Name != "scout" || c.State != "completed" || !strings.HasPrefix(c.Prompt, "/write notes.txt") ||
		len(c.ToolCalls) != 1 || c.ToolCalls[0].Status != "completed" {
		t.Fatalf("child %+v", c)
	}
	text := w.mustRun("status", id).stdout
	if !strings.Contains(text, "children  1 (1 completed)") || !strings.Contains(text, "completed "+c.ID+" scout") {
		t.Fatalf("status text:\n%s", text)
	}
	tr := w.mustRun("transcript", id).stdout
	head := "  [subagent] scout " + c.ID + " (completed)\n    > /write notes.txt hello;/say wrote the notes\n"
	at := strings.Index(tr, head)
	if at < 0 || !strings.Contains(tr[at:], "    wrote the notes\n") || strings.Index(tr, "agent: delegating") > at ||
		strings.Index(tr, "agent: scout is done") < at {
		t.Fatalf("the child is not under the message that started it:\n%s", tr)
	}
	one := w.mustRun("transcript", id, "--child", c.ID).stdout
	if !strings.Contains(one, "you: /write notes.txt hello") || !strings.Contains(one, "wrote the notes") || strings.Contains(one, "scout is done") {
		t.Fatalf("transcript --child:\n%s", one)
	}
	if r := w.run("transcript", id, "--child", "nope"); r.code != 4 {
		t.Fatalf("an unknown child: %s", r)
	}
	if rc := w.mustRun("recap", id).stdout; !strings.Contains(rc, "children  1 (1 completed)") {
		t.Fatalf("recap:\n%s", rc)
	}
	hits := w.mustRun("search", "wrote the notes").stdout
	if !strings.Contains(hits, "child_message") {
		t.Fatalf("search does not find the child's words:\n%s", hits)
	}
	if ls := w.mustRun("list").stdout; !strings.Contains(ls, "[1 subagent(s)]") {
		t.Fatalf("list:\n%s", ls)
	}
}

func TestSubagent_NonsenseAboutChildrenIsRecordedWithAWarningAndTheTurnGoesOn(t *testing.T) {
	t.Parallel()
	w, id, _ := startSubagentWorld(t, "/subagent-bad stranger\n/subagent-bad twice\n/subagent-bad reuse\n/say still here")
	evs := w.events(id)
	var warnings []string
	for _, e := range ofType(evs, eventlog.EventMarker) {
		if e.Kind == "subagent_input" {
			if e.Severity != "warning" {
				t.Fatalf("marker %+v", e)
			}
			warnings = append(warnings, e.Summary)
		}
	}
	want := []string{"never announced", "a second end", "reused"}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q", warnings)
	}
	for i, s := range want {
		if !strings.Contains(warnings[i], s) {
			t.Fatalf("warning %d %q lacks %q", i, warnings[i], s)
		}
	}
	if got := agentText(evs, lastTurn(evs)); got != "still here" {
		t.Fatalf("the parent's text %q", got)
	}
	stranger := childEvents(evs, "sub-bad-stranger")
	if len(stranger) != 1 || stranger[0].Type != eventlog.EventChildMessage || stranger[0].Content != "a stranger speaks" {
		t.Fatalf("the stranger's message %+v", stranger)
	}
	if st := w.status(id); st.Status.Badge != "idle" {
		t.Fatalf("badge %q", st.Status.Badge)
	}
}

func childEnd(evs []eventlog.Event, child string) string {
	for _, e := range childEvents(evs, child) {
		if e.Type == eventlog.EventChildEnded {
			return e.State
		}
	}
	return ""
}

func TestSubagent_CancellingTheTurnCancelsItsChild(t *testing.T) {
	t.Parallel()
	w, id, _ := startSubagentWorld(t, "/say ready")
	b := w.spawn("prompt", id, "/subagent scout /sleep 60000;/say never")
	evs := w.waitForEvents(id, "the child to start", func(evs []eventlog.Event) bool {
		return len(ofType(evs, eventlog.EventChildStarted)) > 0
	})
	child := ofType(evs, eventlog.EventChildStarted)[0].ChildID
	w.mustRun("cancel", id)
	if r := b.wait(t); r.code != 130 {
		t.Fatalf("the cancelled prompt: %s", r)
	}
	evs = w.waitForEvents(id, "the child's end", func(evs []eventlog.Event) bool { return childEnd(evs, child) != "" })
	if got := childEnd(evs, child); got != "cancelled" {
		t.Fatalf("the child of a cancelled turn ended %q", got)
	}
}

func TestSubagent_CancelChildStopsABackgroundChildThatOutlivedItsTurn(t *testing.T) {
	t.Parallel()
	w, id, _ := startSubagentWorld(t, "/subagent-bg watcher /sleep 60000;/say never\n/say the watcher runs")
	evs := w.events(id)
	child := ofType(evs, eventlog.EventChildStarted)[0].ChildID
	if childEnd(evs, child) != "" {
		t.Fatal("the background child ended with its turn")
	}
	var st struct {
		Children []struct{ ID, State string } `json:"children"`
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if len(st.Children) != 1 || st.Children[0].State != "running" {
		t.Fatalf("children %+v", st.Children)
	}
	if r := w.run("cancel", id, "--child", "nope"); r.code != 4 {
		t.Fatalf("cancel of an unknown child: %s", r)
	}
	w.mustRun("cancel", id, "--child", child)
	evs = w.waitForEvents(id, "the child's end", func(evs []eventlog.Event) bool { return childEnd(evs, child) != "" })
	if got := childEnd(evs, child); got != "cancelled" {
		t.Fatalf("the cancelled child ended %q", got)
	}
	if r := w.run("cancel", id, "--child", child); r.code != 1 || !strings.Contains(r.stderr, "cancelled already") {
		t.Fatalf("a second cancel of the child: %s", r)
	}
}

func TestSubagent_ABackgroundChildStillRunningWhenItsAgentStopsIsUnknownNeverCompleted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, r := w.start("/subagent-bg watcher /sleep 60000;/say never")
	if r.code != 0 {
		t.Fatal(r)
	}
	child := ofType(w.events(id), eventlog.EventChildStarted)[0].ChildID
	w.mustRun("close", id)
	waitFor(t, 30*time.Second, "the owner to close", func() bool { return !w.ownerAlive(id) })
	evs := w.events(id)
	if got := childEnd(evs, child); got != "unknown" {
		t.Fatalf("the child of a stopped agent ended %q", got)
	}
	if rc := w.mustRun("recap", id).stdout; !strings.Contains(rc, "children  1 (1 unknown)") {
		t.Fatalf("recap:\n%s", rc)
	}
}

func TestSubagent_ABackgroundChildOfAnEarlierTurnIsNamedWhenTheOwnerIsKilledLater(t *testing.T) {
	t.Parallel()
	w, id, _ := startSubagentWorld(t, "/subagent-bg watcher /sleep 60000;/say never")
	child := ofType(w.events(id), eventlog.EventChildStarted)[0].ChildID
	b := w.spawn("prompt", id, "/say working\n/sleep 60000")
	w.waitForEvents(id, "the second turn to run", func(evs []eventlog.Event) bool { return agentText(evs, lastTurn(evs)) == "working" })
	if pid := w.session(id).OwnerPID; pid > 0 {
		kill(pid, syscall.SIGKILL)
	}
	b.cmd.Process.Kill()
	<-b.done
	waitFor(t, 10*time.Second, "the killed owner to be gone", func() bool { return !w.ownerAlive(id) })
	killSurvivors(w.home, id)
	if r := w.run("resume", id); r.code != 0 {
		t.Fatalf("resume: %s", r)
	}
	evs := w.events(id)
	if got := childEnd(evs, child); got != "unknown" {
		t.Fatalf("the background child ended %q", got)
	}
	cont := continuationTurns(evs)
	if len(cont) != 1 {
		t.Fatalf("%d continuations", len(cont))
	}
	for _, e := range evs {
		if e.Type == eventlog.EventUserMessage && e.TurnID == cont[0].TurnID && !strings.Contains(e.Content, `subagent "watcher" (id `+child+`)`) {
			t.Fatalf("the continuation does not name the background child:\n%s", e.Content)
		}
	}
}

func TestSubagent_AChildNeverAnnouncedIsCountedOnce(t *testing.T) {
	t.Parallel()
	w, id, _ := startSubagentWorld(t, "/subagent-bad stranger\n/say still here")
	if n := w.session(id).Subagents; n != 1 {
		t.Fatalf("the record counts %d children, want the stranger once", n)
	}
	var st struct {
		Children []struct{ ID, State string } `json:"children"`
	}
	decodeJSON(t, w.mustRun("--json", "status", id).stdout, &st)
	if len(st.Children) != 1 || st.Children[0].ID != "sub-bad-stranger" {
		t.Fatalf("children %+v", st.Children)
	}
	if ls := w.mustRun("list").stdout; !strings.Contains(ls, "[1 subagent(s)]") {
		t.Fatalf("list:\n%s", ls)
	}
}

// An agent restored by session/load replays its children as Claude's
// adapter does (announcements, histories, ends, and each child's state
// again after its answer): the log keeps each child once.
func TestSubagent_ALoadThatReplaysTheChildrenRecordsThemOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[agents.demo-noresume]\ncommand = [\"" + kandevBin + "\", \"demo-agent\", \"--no-resume\"]\n")
	id, r := w.start("--agent", "demo-noresume", "/subagent scout /say found it;/think hmm\n/subagent-bg watcher /say watched\n/say back")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	w.waitForEvents(id, "both children's ends", func(evs []eventlog.Event) bool {
		return len(ofType(evs, eventlog.EventChildEnded)) == 2
	})
	w.mustRun("close", id)
	w.waitOwnerGone(id, 30*time.Second)
	before := len(w.events(id))
	if r := w.run("prompt", id, "/say again"); r.code != 0 {
		t.Fatalf("prompt after the close: %s", r)
	}
	evs := w.events(id)
	if starts := agentStarts(evs); starts[len(starts)-1].Restore != "load" {
		t.Fatalf("restored by %q, want load", starts[len(starts)-1].Restore)
	}
	for _, e := range evs[before:] {
		if e.ChildID != "" || e.Kind == "subagent_input" {
			t.Fatalf("the restore recorded a child again: %+v", e)
		}
	}
	if n := len(ofType(evs, eventlog.EventChildStarted)); n != 2 {
		t.Fatalf("%d child_started, want 2", n)
	}
	if n := w.session(id).Subagents; n != 2 {
		t.Fatalf("the record counts %d children, want 2", n)
	}
	if text := w.mustRun("status", id).stdout; !strings.Contains(text, "children  2 (2 completed)") {
		t.Fatalf("status:\n%s", text)
	}
}
