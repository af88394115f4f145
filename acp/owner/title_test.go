package owner

import "testing"

func TestAgentTitle(t *testing.T) {
	cases := []struct {
		update string
		title  string
		ok     bool
	}{
		{`{"sessionUpdate":"session_info_update","title":"Fix the bug"}`, "Fix the bug", true},
		{`{"sessionUpdate":"session_info_update","title":"  first line\nsecond"}`, "first line", true},
		{`{"sessionUpdate":"session_info_update","title":null}`, "", false},
		{`{"sessionUpdate":"session_info_update","title":"   "}`, "", false},
		{`{"sessionUpdate":"session_info_update","updatedAt":"2026-12-01T00:00:00Z"}`, "", false},
		{`{"sessionUpdate":"plan","title":"not a title"}`, "", false},
		{`{"sessionUpdate":"session_info_update","title":"token sk-live-abcdefghijklmnopqrstuvwxyz012345"}`, "token [REDACTED]", true},
	}
	for _, c := range cases {
		title, ok := AgentTitle([]byte(c.update))
		if ok != c.ok || (ok && title != c.title) {
			t.Errorf("AgentTitle(%s) = %q, %v; want %q, %v", c.update, title, ok, c.title, c.ok)
		}
	}
}
