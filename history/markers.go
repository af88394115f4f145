package history

import "github.com/kandev/kandev/eventlog"

// MarkerKind names what a marker says about the session. The set is closed:
// every kind has one fixed severity.
type MarkerKind string

// Marker kinds.
const (
	MarkerPromptCancel        MarkerKind = "prompt_cancel"
	MarkerPromptTimeout       MarkerKind = "prompt_timeout"
	MarkerPromptInterrupted   MarkerKind = "prompt_interrupted"
	MarkerPromptQueued        MarkerKind = "prompt_queued"
	MarkerSessionRecovered    MarkerKind = "session_recovered"
	MarkerSessionUnhealthy    MarkerKind = "session_unhealthy"
	MarkerProviderFailure     MarkerKind = "provider_failure"
	MarkerAuthRequired        MarkerKind = "auth_required"
	MarkerResumeFailed        MarkerKind = "resume_failed"
	MarkerToolOutcomeUnknown  MarkerKind = "tool_outcome_unknown"
	MarkerContinuationPaused  MarkerKind = "continuation_paused"
	MarkerContinuationResumed MarkerKind = "continuation_resumed"
	MarkerSessionRepaired     MarkerKind = "session_repaired"
	MarkerAgentFailure        MarkerKind = "agent_failure"
	MarkerContextPending      MarkerKind = "context_pending"
	MarkerSessionRewound      MarkerKind = "session_rewound"
	MarkerSessionForked       MarkerKind = "session_forked"
	MarkerPermissionTimeout   MarkerKind = "permission_timeout"
	// MarkerSetupNotOffered: the restored agent no longer offers a model,
	// mode or option of the session's setup.
	MarkerSetupNotOffered MarkerKind = "setup_not_offered"
	// MarkerUsageLimit: the agent refused a turn over its usage or rate
	// limit; Data holds {"reset_at"} when it said when the limit resets.
	MarkerUsageLimit MarkerKind = "usage_limit"
	// MarkerNotifyFailed: the [notify] command failed (exit status, timeout,
	// could not start); said once per kind in an owner's life.
	MarkerNotifyFailed MarkerKind = "notify_failed"
	// MarkerLimitData: the agent's usage window report made no sense in
	// part (a reset in the past or too far ahead, a percentage over 100);
	// that part was clamped or ignored.
	MarkerLimitData MarkerKind = "limit_data"
	// MarkerWakeReport: what one unattended wake (kandev recover) did
	// ("resumed N turns, spent X").
	MarkerWakeReport MarkerKind = "wake_report"
	// MarkerAgentSwitched: kandev switch moved the session to another agent.
	MarkerAgentSwitched MarkerKind = "agent_switched"
	// MarkerMessageRefused: the agent wrote a line over the line bound
	// (rpcwire.MaxLine); it was read through and dropped, and whoever
	// waited for it was given an error instead.
	MarkerMessageRefused MarkerKind = "message_refused"
	// MarkerRanOffline: the session travels between machines, its remote
	// did not answer, and --offline ran the turn on this machine's copy
	// without the claim (a later conflicting push is a divergence).
	MarkerRanOffline MarkerKind = "ran_offline"
	// MarkerTakenOver: another machine took the claim over during a turn
	// on this machine, which stopped it there.
	MarkerTakenOver MarkerKind = "taken_over"
	// MarkerSubagentInput: an update about a child made no sense (a child
	// never announced, a second end, a reused id); it was recorded as it came.
	MarkerSubagentInput MarkerKind = "subagent_input"
	// MarkerSubagentUnknown: a repair found children running when their
	// owner died; each is marked unknown (child_ended).
	MarkerSubagentUnknown MarkerKind = "subagent_unknown"
)

// Marker severities.
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// Bounds on a marker's text, in bytes.
const (
	MaxMarkerSummaryBytes    = 2048
	MaxMarkerDiagnosticBytes = 8 << 10
)

var markerSeverity = map[MarkerKind]string{
	MarkerPromptCancel:        SeverityInfo,
	MarkerPromptTimeout:       SeverityWarning,
	MarkerPromptInterrupted:   SeverityWarning,
	MarkerPromptQueued:        SeverityInfo,
	MarkerSessionRecovered:    SeverityInfo,
	MarkerSessionUnhealthy:    SeverityWarning,
	MarkerProviderFailure:     SeverityError,
	MarkerAuthRequired:        SeverityError,
	MarkerResumeFailed:        SeverityWarning,
	MarkerToolOutcomeUnknown:  SeverityWarning,
	MarkerSubagentInput:       SeverityWarning,
	MarkerSubagentUnknown:     SeverityWarning,
	MarkerContinuationPaused:  SeverityWarning,
	MarkerContinuationResumed: SeverityInfo,
	MarkerSessionRepaired:     SeverityInfo,
	MarkerAgentFailure:        SeverityError,
	MarkerContextPending:      SeverityInfo,
	MarkerSessionRewound:      SeverityInfo,
	MarkerSessionForked:       SeverityInfo,
	MarkerPermissionTimeout:   SeverityWarning,
	MarkerSetupNotOffered:     SeverityWarning,
	MarkerUsageLimit:          SeverityWarning,
	MarkerNotifyFailed:        SeverityWarning,
	MarkerLimitData:           SeverityWarning,
	MarkerWakeReport:          SeverityInfo,
	MarkerAgentSwitched:       SeverityInfo,
	MarkerMessageRefused:      SeverityWarning,
	MarkerRanOffline:          SeverityWarning,
}

// Severity is the kind's fixed severity: info, warning or error. A kind outside
// the set gets warning, so a marker is never written without one.
func (k MarkerKind) Severity() string {
	if s, ok := markerSeverity[k]; ok {
		return s
	}
	return SeverityWarning
}

// ValidMarkerKind reports whether s is one of the marker kinds.
func ValidMarkerKind(s string) bool {
	_, ok := markerSeverity[MarkerKind(s)]
	return ok
}

// NewMarker returns a marker event of the given kind with its severity, the
// summary cut to MaxMarkerSummaryBytes and the diagnostic cut to
// MaxMarkerDiagnosticBytes, both redacted first (so a cut never leaves half a
// secret) and cut on a UTF-8 boundary. Seq, Timestamp and SessionID are left
// for the log writer.
func NewMarker(kind MarkerKind, summary, diagnostic string) eventlog.Event {
	return eventlog.Event{
		Type:       eventlog.EventMarker,
		Kind:       string(kind),
		Severity:   kind.Severity(),
		Summary:    capUTF8(Redact(summary), MaxMarkerSummaryBytes),
		Diagnostic: capUTF8(Redact(diagnostic), MaxMarkerDiagnosticBytes),
	}
}

// PendingMarkers returns the markers in events that are still unresolved, in
// log order. events is in seq order; it may be the whole log, and must at least
// hold the markers and the turn_started events. The rule:
//   - session_unhealthy, prompt_timeout: pending until a later session_recovered marker;
//   - continuation_paused, context_pending: pending until a later turn_started;
//   - provider_failure, auth_required: always pending (an operator must look);
//   - every other kind only records what happened and is never pending.
func PendingMarkers(events []eventlog.Event) []eventlog.Event {
	var pending []eventlog.Event
	recoveredLater, turnLater := false, false
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Type == eventlog.EventTurnStarted {
			turnLater = true
			continue
		}
		if e.Type != eventlog.EventMarker {
			continue
		}
		switch MarkerKind(e.Kind) {
		case MarkerSessionRecovered:
			recoveredLater = true
		case MarkerSessionUnhealthy, MarkerPromptTimeout:
			if !recoveredLater {
				pending = append(pending, e)
			}
		case MarkerContinuationPaused, MarkerContextPending:
			if !turnLater {
				pending = append(pending, e)
			}
		case MarkerProviderFailure, MarkerAuthRequired:
			pending = append(pending, e)
		}
	}
	for i, j := 0, len(pending)-1; i < j; i, j = i+1, j-1 {
		pending[i], pending[j] = pending[j], pending[i]
	}
	return pending
}
