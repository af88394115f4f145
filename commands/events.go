package commands

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// eventsCmd is kandev events.
type eventsCmd struct {
	SessionRef
	Since  int64  `help:"Only events with seq greater than SEQ." placeholder:"SEQ"`
	Type   string `help:"Only events of these types (comma-separated)." placeholder:"T"`
	Follow bool   `short:"f" help:"Keep printing new events of a live session; ends when its owner exits."`
}

// Help shows an example.
func (c *eventsCmd) Help() string {
	return "Example:\n  kandev events 20261130 --since 10 --type tool_call,tool_result"
}

// With --follow it waits on the log, so it keeps the signal handling.
func (c *eventsCmd) readsOnly() bool { return !c.Follow }

// Run prints the session's raw events.
func (c *eventsCmd) Run(env *Env) error {
	if c.Since < 0 {
		return usagef("--since must be 0 or more (got %d)", c.Since)
	}
	types := map[string]bool{}
	for _, t := range strings.Split(c.Type, ",") {
		if t = strings.TrimSpace(t); t != "" {
			if c.Follow && !eventlog.KnownEventType(t) {
				return unknownTypeError(t)
			}
			types[t] = true
		}
	}
	id, err := c.resolve(env, needAny)
	if err != nil {
		return err
	}
	h, _ := env.Home()
	if c.Follow {
		return c.follow(env, h, id, types)
	}
	var evs []eventlog.Event
	rep, err := eventlog.ScanLog(h.LogPath(id), func(e eventlog.Event) bool {
		if e.Seq > c.Since && (len(types) == 0 || types[e.Type]) {
			evs = append(evs, e)
		}
		return true
	})
	if err != nil && !isNotFound(err) {
		return err
	}
	// A type this kandev does not know is taken only when the log has
	// events of it (a newer kandev wrote them): else it is a typo.
	for t := range types {
		if !eventlog.KnownEventType(t) && !slices.ContainsFunc(evs, func(e eventlog.Event) bool { return e.Type == t }) {
			return unknownTypeError(t)
		}
	}
	if p := rep.Problems(); p != "" {
		fmt.Fprintln(env.Out.Err, "kandev: warning: "+p)
	}
	if rep.UnknownEvents > 0 {
		fmt.Fprintf(env.Out.Err, "kandev: note: %d event(s) of a type this kandev does not know (a newer kandev wrote them), shown as stored\n", rep.UnknownEvents)
	}
	lines := make([]any, len(evs)) // an unknown event is shown as stored, every field kept
	for i, e := range evs {
		lines[i] = e
		if e.Raw != nil {
			lines[i] = e.Raw
		}
	}
	env.Out.Object(eventsOutput{Events: lines}, func(w io.Writer) {
		for _, e := range evs {
			fmt.Fprintf(w, "%6d  %s  %-20s %s\n", e.Seq, textTimestamp(e.Timestamp), e.Type, eventSummary(e))
		}
	})
	return nil
}

func unknownTypeError(t string) error {
	return usagef("--type %q: not an event type; the types are %s", t, strings.Join(eventTypes, ", "))
}

// eventTypes are the event types --type takes, in the order a turn writes them.
var eventTypes = []string{
	eventlog.EventTurnStarted, eventlog.EventUserMessage, eventlog.EventAgentMessage, eventlog.EventAgentThought,
	eventlog.EventToolCall, eventlog.EventToolResult, eventlog.EventPlan, eventlog.EventPermissionRequest,
	eventlog.EventPermissionResolved, eventlog.EventTurnEnded, eventlog.EventState, eventlog.EventAgentStarted,
	eventlog.EventAgentExited, eventlog.EventMarker, eventlog.EventUsage, eventlog.EventLimit, eventlog.EventRewind, eventlog.EventAgentUpdate,
	eventlog.EventChildStarted, eventlog.EventChildMessage, eventlog.EventChildThought, eventlog.EventChildToolCall,
	eventlog.EventChildToolResult, eventlog.EventChildUpdate, eventlog.EventChildEnded,
}

// eventSummary is one line describing an event.
func eventSummary(e eventlog.Event) string {
	var s string
	switch e.Type {
	case eventlog.EventUserMessage, eventlog.EventAgentMessage, eventlog.EventAgentThought:
		s = e.Content
	case eventlog.EventToolCall, eventlog.EventToolResult:
		s = fmt.Sprintf("%s %s [%s] %s", e.ToolCallID, e.ToolName, e.ToolStatus, e.Content)
	case eventlog.EventTurnStarted:
		s = e.TurnID + " source=" + e.Source
	case eventlog.EventTurnEnded:
		s = e.TurnID + " stop_reason=" + e.StopReason
	case eventlog.EventPromptSent:
		s = e.TurnID
	case eventlog.EventState:
		s = e.State
	case eventlog.EventAgentStarted:
		s = fmt.Sprintf("pid=%d restore=%s %s", e.PID, e.Restore, e.FallbackReason)
	case eventlog.EventAgentExited:
		s = fmt.Sprintf("pid=%d %s", e.PID, e.Content)
	case eventlog.EventMarker:
		s = e.Kind + " (" + e.Severity + "): " + e.Summary
	case eventlog.EventUsage:
		s = usageSummary(e)
	case eventlog.EventSetupChanged:
		s = e.Source + ": " + e.Summary
	case eventlog.EventLimit:
		s = e.Summary
	case eventlog.EventAgentSwitched:
		s = e.From + " -> " + e.To
	case eventlog.EventPermissionRequest, eventlog.EventPermissionResolved:
		s = e.ToolCallID + " " + e.ToolName + " " + e.Content
	case eventlog.EventChildStarted, eventlog.EventChildMessage, eventlog.EventChildThought, eventlog.EventChildToolCall,
		eventlog.EventChildToolResult, eventlog.EventChildUpdate, eventlog.EventChildEnded:
		s = childSummary(e) // children.go
	default:
		s = string(e.Data)
		if e.Raw != nil {
			s = "(unknown event) " + string(e.Raw)
		}
	}
	s = strings.ReplaceAll(s, "\n", "\\n")
	return history.Clip(s, 117)
}

// follow prints the events after --since, then new ones as the owner
// appends them, and returns when no process owns the session any more.
func (c *eventsCmd) follow(env *Env, h *state.Home, id string, types map[string]bool) error {
	from, err := eventlog.OffsetAfterSeq(h.LogPath(id), c.Since)
	if err != nil {
		return err
	}
	last := c.Since
	print := func(e eventlog.Event) bool {
		if e.Seq <= last {
			return true
		}
		last = e.Seq
		if len(types) > 0 && !types[e.Type] {
			return true
		}
		if env.Out.JSON {
			env.Out.Event(e)
		} else {
			fmt.Fprintf(env.Out.Out, "%6d  %s  %-20s %s\n", e.Seq, textTimestamp(e.Timestamp), e.Type, eventSummary(e))
		}
		return true
	}
	ownerGone := func() bool {
		return !owner.Live(h, id)
	}
	from, err = eventlog.Follow(env.Ctx, h.LogPath(id), from, print, ownerGone)
	if err != nil && env.Ctx.Err() != nil {
		return nil // Ctrl-C ends a follow normally
	}
	// Pick up what the owner wrote just before it exited.
	_, _ = eventlog.Follow(env.Ctx, h.LogPath(id), from, print, func() bool { return true })
	if s, err := h.LoadSession(id); err == nil && env.Out.JSON {
		env.Out.Object(s, nil)
	}
	return err
}
