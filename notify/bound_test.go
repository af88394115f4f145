package notify

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kandev/kandev/eventlog"
)

func TestBound_ANoteOfAnySizeIsCutWithAMarkerThatKeepsItsAdvice(t *testing.T) {
	huge := strings.Repeat("é", 60<<10) // two-byte runes: a cut must not split one
	cases := []struct {
		name    string
		title   string
		wantCut bool
	}{
		{"a short title", "write out.txt", false},
		{"a 100 KB title", strings.Repeat("t", 100<<10), true},
		{"a 120 KB title of two-byte runes", huge, true},
	}
	for _, c := range cases {
		n, ok := For(eventlog.Event{Type: eventlog.EventPermissionRequest, Deferred: true, Content: c.title, SessionID: "S1"}, true)
		if !ok {
			t.Fatalf("%s: no note", c.name)
		}
		n.Session = "S1"
		b := Bound(n)
		if len(b.Summary) > MaxSummaryBytes || !utf8.ValidString(b.Summary) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", c.name, len(b.Summary), utf8.ValidString(b.Summary))
		}
		if cut := strings.Contains(b.Summary, "[cut: "); cut != c.wantCut {
			t.Errorf("%s: cut %v, want %v", c.name, cut, c.wantCut)
		}
		if !strings.HasSuffix(b.Summary, "(kandev approve S1 | kandev deny S1)") || !strings.Contains(b.Summary, "kandev events S1") == c.wantCut {
			t.Errorf("%s: the advice is lost: %.200q … %q", c.name, b.Summary, b.Summary[len(b.Summary)-80:])
		}
	}
}
