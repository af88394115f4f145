package remote

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// checkLogRedacted reads the lines a push would send with the log's own line
// reader: lines of any length, an unterminated last one, and lines that are
// no event (skipped, but counted, so the error names the file's line).
func TestCheckLogRedacted_NamesTheFirstLineThatStillHoldsASecret(t *testing.T) {
	ev := func(seq int, content string) string {
		return fmt.Sprintf(`{"seq":%d,"timestamp":"2026-12-01T10:00:00Z","type":"agent_message","session_id":"s","role":"assistant","content":%q}`, seq, content)
	}
	const secret = "the key is AKIAIOSFODNN7EXAMPLE"
	long := strings.Repeat("word ", 40000) // 200 KB: longer than a default scanner's line
	for _, tc := range []struct {
		name string
		log  string
		want string // "" = accepted
	}{
		{"clean lines", ev(5, "hello") + "\n" + ev(6, "there") + "\n", ""},
		{"nothing appended", "", ""},
		{"a secret on the second line", ev(5, "hello") + "\n" + ev(6, secret) + "\n", "log line 11 (seq 6, agent_message)"},
		{"a line that is no event still counts", "not json\n" + ev(6, secret) + "\n", "log line 11 (seq 6"},
		{"a long clean line", ev(5, long) + "\n", ""},
		{"a secret at the end of a long line", ev(5, long+secret) + "\n", "log line 10 (seq 5"},
		{"an unterminated last line", ev(5, "hello") + "\n" + ev(6, secret), "log line 11 (seq 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLogRedacted("s", []byte(tc.log), 10)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused a clean log: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrUnredacted) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want ErrUnredacted naming %q", err, tc.want)
			}
		})
	}
}

func TestSyncedLine_AReleasedOrExpiredClaimIsNotShownAsHeld(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	live := &Claim{Machine: "A", PID: 7, ExpiresAt: now.Add(time.Minute)}
	expired := &Claim{Machine: "A", PID: 7, ExpiresAt: now.Add(-time.Minute)}
	released := &Claim{Machine: "A", PID: 7, ExpiresAt: now, Released: true}
	cases := []struct {
		name      string
		sy        Synced
		want, not string
	}{
		{"live, held here", Synced{RemoteClaim: live, Claim: live}, "claim: held by A (pid 7) until", "expired"},
		{"expired", Synced{RemoteClaim: expired, Claim: expired}, "claim: expired at", "held"},
		{"released", Synced{RemoteClaim: released}, "claim: released by A", "held"},
		{"never claimed", Synced{}, "claim: none", "held"},
	}
	for _, c := range cases {
		got := c.sy.lineAt(now)
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%s: %q, want %q and no %q", c.name, got, c.want, c.not)
		}
	}
}
