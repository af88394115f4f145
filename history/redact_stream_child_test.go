package history

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

func TestStreamRedactor_ASecretSplitAcrossAChildsChunksIsRedacted(t *testing.T) {
	var r StreamRedactor
	secret := "sk-ant-api03-" + strings.Repeat("a1B2", 20)
	var out []*eventlog.Event
	for _, part := range []string{"my key is " + secret[:10], secret[10:30], secret[30:] + " ok\n"} {
		out = append(out, r.Events([]*eventlog.Event{{Type: eventlog.EventChildMessage, ChildID: "c1", TurnID: "t1", Content: part}})...)
	}
	out = append(out, r.Events([]*eventlog.Event{{Type: eventlog.EventTurnEnded}})...)
	var text strings.Builder
	for _, e := range out {
		if e.Type == eventlog.EventChildMessage {
			if e.ChildID != "c1" {
				t.Fatalf("a chunk lost its child: %+v", e)
			}
			text.WriteString(e.Content)
		}
	}
	if strings.Contains(text.String(), secret[5:25]) || !strings.Contains(text.String(), Redacted) {
		t.Fatalf("the child's text as written: %q", text.String())
	}
}
