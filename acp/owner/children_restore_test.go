package owner

import (
	"testing"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/eventlog"
)

// An agent that replays its load after its answer (Gemini CLI's way) and
// re-tells the children in it: the late replay is dropped, children and
// all, and the log keeps each child once.
func TestOwner_ALateLoadReplayOfChildrenRecordsThemOnce(t *testing.T) {
	r := newRig(t)
	r.opts.NoResume = true
	id := r.create("/subagent scout /say found it\n/say back")
	r.mustRun(r.job(id, ""))
	before := len(r.events(id))
	r.opts.LateReplay = true
	if res := r.mustRun(r.job(id, "/say again")); res.Restore != acp.RestoreLoad {
		t.Fatalf("restored by %s, want load", res.Restore)
	}
	evs := r.events(id)
	for _, e := range evs[before:] {
		if e.ChildID != "" || e.Kind == "subagent_input" {
			t.Fatalf("the late replay recorded a child again: %s %s %q", e.Type, e.ChildID, e.Summary)
		}
	}
	n := 0
	for _, e := range evs {
		if e.Type == eventlog.EventChildStarted {
			n++
		}
	}
	if n != 1 || r.session(id).Subagents != 1 {
		t.Fatalf("%d child_started, record counts %d; want 1 and 1", n, r.session(id).Subagents)
	}
}
