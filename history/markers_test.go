package history

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kandev/kandev/eventlog"
)

func TestMarkerKind_HasFixedSeverity(t *testing.T) {
	want := map[MarkerKind]string{
		"prompt_cancel": "info", "prompt_timeout": "warning", "prompt_interrupted": "warning",
		"prompt_queued": "info", "session_recovered": "info", "session_unhealthy": "warning",
		"provider_failure": "error", "auth_required": "error", "resume_failed": "warning",
		"tool_outcome_unknown": "warning", "continuation_paused": "warning", "continuation_resumed": "info",
		"session_repaired": "info", "agent_failure": "error", "context_pending": "info",
		"permission_timeout": "warning", "usage_limit": "warning",
		"session_rewound": "info", "session_forked": "info", "setup_not_offered": "warning",
		"notify_failed": "warning", "agent_switched": "info", "limit_data": "warning", "wake_report": "info",
		"message_refused": "warning", "ran_offline": "warning", "subagent_input": "warning", "subagent_unknown": "warning",
	}
	if len(markerSeverity) != len(want) {
		t.Errorf("%d kinds, want %d", len(markerSeverity), len(want))
	}
	for k, sev := range want {
		if got := k.Severity(); got != sev {
			t.Errorf("%s.Severity() = %q, want %q", k, got, sev)
		}
		if !ValidMarkerKind(string(k)) {
			t.Errorf("ValidMarkerKind(%q) = false", k)
		}
	}
}

func TestValidMarkerKind_RejectsUnknownKinds(t *testing.T) {
	for _, s := range []string{"", "PROMPT_CANCEL", "prompt-cancel", "interrupted"} {
		if ValidMarkerKind(s) {
			t.Errorf("ValidMarkerKind(%q) = true", s)
		}
	}
	if got := MarkerKind("bogus").Severity(); got != SeverityWarning {
		t.Errorf("unknown kind severity = %q, want warning", got)
	}
}

func TestNewMarker_FillsKindSeverityAndLeavesPositionToTheWriter(t *testing.T) {
	m := NewMarker(MarkerProviderFailure, "The agent failed the turn: rate limited.", "HTTP 429\nAuthorization: Bearer abcdef123456")
	want := eventlog.Event{
		Type: eventlog.EventMarker, Kind: "provider_failure", Severity: "error",
		Summary:    "The agent failed the turn: rate limited.",
		Diagnostic: "HTTP 429\nAuthorization: [REDACTED]",
	}
	if m.Type != want.Type || m.Kind != want.Kind || m.Severity != want.Severity || m.Summary != want.Summary || m.Diagnostic != want.Diagnostic {
		t.Errorf("NewMarker =\n%+v\nwant\n%+v", m, want)
	}
	if m.Seq != 0 || m.Timestamp != "" || m.SessionID != "" {
		t.Errorf("writer fields set: %+v", m)
	}
}

func TestNewMarker_CapsTextOnRuneBoundary(t *testing.T) {
	summary := strings.Repeat("é", 3000) // 6000 bytes
	diag := strings.Repeat("日本", 3000)   // 18000 bytes
	m := NewMarker(MarkerAgentFailure, summary, diag)
	if len(m.Summary) > MaxMarkerSummaryBytes || !utf8.ValidString(m.Summary) || !strings.HasSuffix(m.Summary, truncatedMark) {
		t.Errorf("summary: %d bytes, valid=%v", len(m.Summary), utf8.ValidString(m.Summary))
	}
	if len(m.Diagnostic) > MaxMarkerDiagnosticBytes || !utf8.ValidString(m.Diagnostic) || !strings.HasSuffix(m.Diagnostic, truncatedMark) {
		t.Errorf("diagnostic: %d bytes, valid=%v", len(m.Diagnostic), utf8.ValidString(m.Diagnostic))
	}
	short := NewMarker(MarkerPromptCancel, "Cancelled.", "")
	if short.Summary != "Cancelled." || short.Diagnostic != "" {
		t.Errorf("short marker changed: %+v", short)
	}
}

func TestPendingMarkers_KeepsOnlyUnresolvedMarkers(t *testing.T) {
	marker := func(seq int64, k MarkerKind) eventlog.Event {
		e := NewMarker(k, string(k), "")
		e.Seq = seq
		return e
	}
	turn := func(seq int64) eventlog.Event {
		return eventlog.Event{Seq: seq, Type: eventlog.EventTurnStarted, Source: eventlog.SourceUser}
	}
	cases := []struct {
		name   string
		events []eventlog.Event
		want   []int64
	}{
		{"none", nil, nil},
		{"unhealthy until recovered", []eventlog.Event{marker(1, MarkerSessionUnhealthy)}, []int64{1}},
		{"unhealthy resolved by later recovery", []eventlog.Event{marker(1, MarkerSessionUnhealthy), marker(2, MarkerSessionRecovered)}, nil},
		{"recovery before the problem does not resolve it", []eventlog.Event{marker(1, MarkerSessionRecovered), marker(2, MarkerPromptTimeout)}, []int64{2}},
		{"timeout resolved by recovery", []eventlog.Event{marker(1, MarkerPromptTimeout), turn(2), marker(3, MarkerSessionRecovered)}, nil},
		{"turn does not resolve a timeout", []eventlog.Event{marker(1, MarkerPromptTimeout), turn(2)}, []int64{1}},
		{"provider failure always pending", []eventlog.Event{marker(1, MarkerProviderFailure), marker(2, MarkerSessionRecovered), turn(3)}, []int64{1}},
		{"auth required always pending", []eventlog.Event{marker(1, MarkerAuthRequired), turn(2)}, []int64{1}},
		{"paused until next turn", []eventlog.Event{marker(1, MarkerContinuationPaused)}, []int64{1}},
		{"paused resolved by a turn", []eventlog.Event{marker(1, MarkerContinuationPaused), turn(2)}, nil},
		{"context pending until next turn", []eventlog.Event{turn(1), marker(2, MarkerContextPending)}, []int64{2}},
		{"informational kinds never pending", []eventlog.Event{marker(1, MarkerPromptCancel), marker(2, MarkerSessionRepaired), marker(3, MarkerResumeFailed), marker(4, MarkerToolOutcomeUnknown), marker(5, MarkerAgentFailure), marker(6, MarkerPromptQueued), marker(7, MarkerPromptInterrupted)}, nil},
		{"kept in log order", []eventlog.Event{marker(1, MarkerAuthRequired), marker(2, MarkerSessionUnhealthy), marker(3, MarkerProviderFailure)}, []int64{1, 2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PendingMarkers(c.events)
			var seqs []int64
			for _, e := range got {
				seqs = append(seqs, e.Seq)
			}
			if len(seqs) != len(c.want) {
				t.Fatalf("pending seqs = %v, want %v", seqs, c.want)
			}
			for i := range seqs {
				if seqs[i] != c.want[i] {
					t.Fatalf("pending seqs = %v, want %v", seqs, c.want)
				}
			}
		})
	}
}
