package owner

import (
	"encoding/json"
	"strings"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/subagents"
)

// A turn's children (subagents, background tasks) are repaired like its
// tool calls: one still running when its owner died may or may not have
// done its work, so the repair marks it unknown (child_ended), and the one
// continuation names it, its task and its side-effecting tool calls.

// unvouched are the children of turnID's events whose outcome kandev
// cannot vouch for: running (no end recorded) or already marked unknown.
func unvouched(events []eventlog.Event, turnID string) []subagents.Child {
	var own []eventlog.Event
	for _, e := range events {
		if e.TurnID == turnID && e.ChildID != "" {
			own = append(own, e)
		}
	}
	if len(own) == 0 {
		return nil
	}
	var out []subagents.Child
	for _, c := range subagents.Summarize(own) {
		if c.State == subagents.Running || c.State == subagents.Unknown {
			out = append(out, c)
		}
	}
	return out
}

// childRepairs are the events that mark each running child of kids
// unknown, and a marker that names them; nil when none runs.
func childRepairs(turnID string, kids []subagents.Child) []*eventlog.Event {
	var out []*eventlog.Event
	var names []string
	for _, c := range subagents.Unfinished(kids) {
		names = append(names, c.ID)
		out = append(out, &eventlog.Event{Type: eventlog.EventChildEnded, TurnID: turnID, ChildID: c.ID, State: subagents.Unknown,
			Summary: "kandev was stopped while this subagent ran: its work may or may not have been done."})
	}
	if len(out) == 0 {
		return nil
	}
	m := history.NewMarker(history.MarkerSubagentUnknown, "Subagents still running when their owner died, now unknown: "+strings.Join(names, ", ")+".", "")
	m.TurnID = turnID
	m.Data, _ = json.Marshal(map[string]any{"unknown_children": names})
	return append(out, &m)
}

// childOf is the child that session sessionID is, "" when it is the
// agent's session for this one (a request of a child is recorded with the
// child's id, and its tool call is the child's, not the parent's).
func (o *owner) childOf(sessionID string) string {
	token := o.session().ResumeToken
	if sessionID == "" || token == "" || sessionID == token {
		return ""
	}
	return sessionID
}

// countChildren adds the children evs are the first to tell of to the
// record's count, which kandev list shows without reading the log: each
// child id once, whether it was announced or its updates came without an
// announcement, as status lists them. It also keeps which children may
// still run (orphanChildren). Called on the recorder goroutine.
func (o *owner) countChildren(evs []*eventlog.Event) {
	o.kidsMu.Lock()
	if o.kids == nil {
		o.kids = map[string]bool{}
	}
	n := noteChildren(o.kids, evs)
	o.kidsMu.Unlock()
	if n > 0 {
		o.update(func(s *state.Session) { s.Subagents += n })
	}
}

// noteChildren notes in kids (child id → it may still run) what evs say of
// each child, and counts the ids kids did not have.
func noteChildren(kids map[string]bool, evs []*eventlog.Event) int {
	n, last := 0, ""
	for _, e := range evs {
		if e.ChildID == "" || !eventlog.IsChildEvent(e.Type) {
			continue
		}
		_, had := kids[e.ChildID]
		switch e.Type {
		case eventlog.EventChildStarted, eventlog.EventChildUpdate:
			kids[e.ChildID] = true // started, or an idle child given work again
		case eventlog.EventChildEnded:
			kids[e.ChildID] = false
		default:
			if e.ChildID == last {
				continue // a child's stream comes in runs: one lookup per run
			}
			if !had {
				kids[e.ChildID] = true // updates of a child never announced: it runs until it ends
			}
		}
		last = e.ChildID
		if !had {
			n++
		}
	}
	return n
}

// knowChildren starts the owner's account of the children from the log's
// (known: id → ended), when it connects to an agent.
func (o *owner) knowChildren(known map[string]bool) {
	o.kidsMu.Lock()
	defer o.kidsMu.Unlock()
	o.kids = map[string]bool{}
	for id, ended := range known {
		o.kids[id] = !ended
	}
}

// noneRunning says whether the owner's account shows that no child may
// still run (false when it has none: the log must tell).
func (o *owner) noneRunning() bool {
	o.kidsMu.Lock()
	defer o.kidsMu.Unlock()
	if o.kids == nil {
		return false
	}
	for _, runs := range o.kids {
		if runs {
			return false
		}
	}
	return true
}

// cancelChild sends session/cancel for the child a kandev cancel --child
// names, as the subagents RFD lets a client stop a child that offers it;
// the child's end is what the agent then reports.
func (o *owner) cancelChild(in state.Input) {
	if o.acted == nil {
		o.acted = map[string]bool{}
	}
	o.acted[in.ID] = true
	if o.conn == nil {
		return
	}
	if err := o.conn.CancelChild(in.Child); err != nil {
		o.warn("could not cancel child " + in.Child + ": " + err.Error())
		return
	}
	o.marker(history.MarkerPromptCancel, "Child "+in.Child+" was cancelled with kandev cancel --child; the agent reports its end.", "")
}

// orphanChildren marks unknown every child the log still has running when
// the agent that ran them is gone (stopped, dead, or its owner killed):
// background children of earlier turns too, which no turn repair covers.
// The marks belong to turn (the repaired turn, so that its continuation
// names them; "" outside a turn) and carry the child's name and task. Only
// a session whose record counts children reads its log for them.
func (o *owner) orphanChildren(why, turn string) []subagents.Child {
	if o.session().Subagents == 0 || o.noneRunning() {
		return nil
	}
	kids, err := subagents.FromLog(o.job.Home.LogPath(o.s.ID))
	if err != nil {
		return nil
	}
	var evs []*eventlog.Event
	orphans := subagents.Unfinished(kids)
	for i, c := range orphans {
		data, _ := json.Marshal(subagents.Spawn{Name: c.Name, Task: c.Task, Kind: c.Kind})
		evs = append(evs, &eventlog.Event{Type: eventlog.EventChildEnded, TurnID: turn, ChildID: c.ID, State: subagents.Unknown, Summary: why, Data: data})
		orphans[i].State = subagents.Unknown
	}
	o.kidsMu.Lock()
	for _, c := range orphans {
		if o.kids != nil {
			o.kids[c.ID] = false
		}
	}
	o.kidsMu.Unlock()
	if len(evs) > 0 {
		o.append(true, evs...)
	}
	return orphans
}

// withOrphans adds the children a repair found running to those the
// continuation names, once each.
func withOrphans(named, orphans []subagents.Child) []subagents.Child {
	seen := map[string]bool{}
	for _, c := range named {
		seen[c.ID] = true
	}
	for _, c := range orphans {
		if !seen[c.ID] {
			named = append(named, c)
		}
	}
	return named
}

// knownChildren are the children the log has (id → ended), so that an
// agent that tells of them again after a restore is not taken to start
// them anew; nil for a session whose record counts none.
func (o *owner) knownChildren() map[string]bool {
	s := o.session()
	if s.Subagents == 0 {
		return nil
	}
	kids, err := subagents.FromLog(o.job.Home.LogPath(s.ID))
	if err != nil {
		return nil
	}
	known := map[string]bool{}
	for _, c := range kids {
		known[c.ID] = c.State != subagents.Running
	}
	return known
}
