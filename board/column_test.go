package board

import (
	"os"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

func TestColumnOf_EachBadgeGoesWhereItsNeedIs(t *testing.T) {
	for _, tc := range []struct {
		badge string
		want  Column
	}{
		{verdict.BadgeWaitingForPermission, NeedsYou}, // a permission or a question parked
		{verdict.BadgeWaitingForLimit, NeedsYou},
		{verdict.BadgeFailed, NeedsYou},
		{verdict.BadgePaused, NeedsYou},  // continuation paused for an operator
		{verdict.BadgeUnknown, NeedsYou}, // an unreadable record
		{verdict.BadgeRunning, Running},
		{verdict.BadgeNeedsResume, NeedsResume},
		{verdict.BadgeIdle, WarmIdle},
		{verdict.BadgeStopped, WarmIdle},
		{verdict.BadgeDone, Done},
		{verdict.BadgeCancelled, Done}, // archived
		{"a-badge-from-a-later-kandev", WarmIdle},
	} {
		if got := ColumnOf(tc.badge); got != tc.want {
			t.Errorf("ColumnOf(%q) = %s, want %s", tc.badge, got.Title(), tc.want.Title())
		}
	}
}

func TestNewCard_SaysWhatTheSessionNeeds(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.Local)
	reset := now.Add(time.Hour)
	warm := now.Add(5 * time.Minute)
	for _, tc := range []struct {
		name string
		s    state.Session
		f    Facts
		want string
	}{
		{"a parked permission names its tool", state.Session{ParkedRequests: []state.ParkedRequest{{ToolName: "Write out.txt"}}},
			Facts{Badge: verdict.BadgeWaitingForPermission}, "permission: Write out.txt"},
		{"a parked question is a question", state.Session{ParkedRequests: []state.ParkedRequest{{Kind: state.ParkedQuestion}}},
			Facts{Badge: verdict.BadgeWaitingForPermission}, "question"},
		{"a limit says when it resets", state.Session{Limit: &state.UsageLimit{ResetAt: &reset}},
			Facts{Badge: verdict.BadgeWaitingForLimit}, "limit resets 13:00"},
		{"a failure says why", state.Session{ErrorMessage: "agent \x1b[31mexploded\n"},
			Facts{Badge: verdict.BadgeFailed}, "failed: agent [31mexploded"},
		{"a warm owner says until when", state.Session{}, Facts{Badge: verdict.BadgeIdle, WarmUntil: &warm}, "warm until 12:05"},
		{"otherwise the badge", state.Session{}, Facts{Badge: verdict.BadgeIdle}, "idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCard(&tc.s, tc.f)
			if got := c.Status(now); got != tc.want {
				t.Errorf("Status = %q, want %q", got, tc.want)
			}
		})
	}
	if c := UnreadableCard("x", "bad json"); c.Status(now) != "unreadable record" || c.Column() != NeedsYou {
		t.Errorf("unreadable card: %q in %s", c.Status(now), c.Column().Title())
	}
}

func TestAge_IsOneShortWord(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{{3 * time.Second, "3s"}, {-time.Second, "0s"}, {5 * time.Minute, "5m"}, {30 * time.Hour, "30h"}, {72 * time.Hour, "3d"}} {
		if got := Age(now, now.Add(-tc.ago)); got != tc.want {
			t.Errorf("Age(%v) = %q, want %q", tc.ago, got, tc.want)
		}
	}
	if Age(now, time.Time{}) != "-" {
		t.Error("an unknown time is not -")
	}
}

func TestIDOf_EveryFileOfASessionIsItsSession(t *testing.T) {
	for name, want := range map[string]string{
		"20261207-1-ab.json": "20261207-1-ab", "20261207-1-ab.jsonl": "20261207-1-ab",
		"20261207-1-ab.inbox.jsonl": "20261207-1-ab", "20261207-1-ab.owner.lock": "20261207-1-ab",
		".tmp-123": "", "a b.json": "",
	} {
		if got := IDOf(name); got != want {
			t.Errorf("IDOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLastWords_JoinsTheNewestChunksOfTheAgentsMessage(t *testing.T) {
	path := t.TempDir() + "/s.jsonl"
	lines := `{"seq":1,"type":"user_message","turn_id":"t1","content":"go"}
{"seq":2,"type":"agent_message","turn_id":"t1","content":"hello "}
{"seq":3,"type":"agent_message","turn_id":"t1","content":"MARKER"}
{"seq":4,"type":"agent_message","turn_id":"t1","content":"-LATE"}
{"seq":5,"type":"usage","turn_id":"t1"}
`
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := lastWords(path); got != "hello MARKER-LATE" {
		t.Fatalf("lastWords = %q", got)
	}
	if got := lastWords(path + ".missing"); got != "" {
		t.Fatalf("lastWords of no log = %q", got)
	}
}
