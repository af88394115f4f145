package history

import (
	"fmt"
	"testing"

	"github.com/kandev/kandev/eventlog"
)

// pagedIDs pages backwards from the end and returns the ids oldest first.
func pagedIDs(t *testing.T, entries []Entry, limit int) []string {
	t.Helper()
	var pages [][]Entry
	before := int64(0)
	for round := 0; ; round++ {
		if round > len(entries)+1 {
			t.Fatal("paging does not terminate")
		}
		page, hasOlder, next := Page(entries, before, limit)
		if len(page) > max(limit, 0) && limit > 0 {
			t.Fatalf("page of %d entries, limit %d", len(page), limit)
		}
		pages = append(pages, page)
		if !hasOlder {
			if next != 0 {
				t.Errorf("nextBefore = %d without older entries", next)
			}
			break
		}
		if next >= before && before > 0 {
			t.Fatalf("cursor did not move back: %d -> %d", before, next)
		}
		before = next
	}
	var ids []string
	for i := len(pages) - 1; i >= 0; i-- {
		for _, en := range pages[i] {
			ids = append(ids, en.Message.ID)
		}
	}
	return ids
}

func TestPage_VisitsEveryEntryExactlyOnce(t *testing.T) {
	var synthetic []eventlog.Event
	for i := int64(1); i <= 500; i++ {
		switch i % 5 {
		case 0:
			synthetic = append(synthetic, eventlog.Event{Seq: i, Type: eventlog.EventUserMessage, Content: fmt.Sprint("u", i)})
		case 1:
			synthetic = append(synthetic, eventlog.Event{Seq: i, Type: eventlog.EventToolCall, ToolCallID: fmt.Sprint("c", i), ToolName: "t"})
		case 2:
			synthetic = append(synthetic, eventlog.Event{Seq: i, Type: eventlog.EventMarker, Kind: "prompt_queued", Summary: "q"})
		case 3:
			// The result of the call two events back, after the marker: it stretches an older entry.
			synthetic = append(synthetic, eventlog.Event{Seq: i, Type: eventlog.EventToolResult, ToolCallID: fmt.Sprint("c", i-2), ToolStatus: "completed"})
		case 4:
			synthetic = append(synthetic, eventlog.Event{Seq: i, Type: eventlog.EventAgentMessage, TurnID: "t", Content: "x"})
		}
	}
	logs := map[string][]eventlog.Event{
		"basic":       readEvents(t, "transcript/basic.events.jsonl"),
		"interrupted": readEvents(t, "transcript/interrupted.events.jsonl"),
		"synthetic":   synthetic,
	}
	for name, events := range logs {
		entries := Assemble(events)
		for _, limit := range []int{1, 2, 3, 7, 200, 1000} {
			t.Run(fmt.Sprintf("%s/limit=%d", name, limit), func(t *testing.T) {
				ids := pagedIDs(t, entries, limit)
				if len(ids) != len(entries) {
					t.Fatalf("visited %d entries, want %d", len(ids), len(entries))
				}
				for i, en := range entries {
					if ids[i] != en.Message.ID {
						t.Fatalf("position %d: %s, want %s", i, ids[i], en.Message.ID)
					}
				}
			})
		}
	}
}

func TestPage_ReturnsNewestEntriesBeforeTheCursor(t *testing.T) {
	var entries []Entry
	for _, s := range []int64{2, 5, 9, 14, 20} {
		entries = append(entries, Entry{StartSequence: s, Sequence: s + 1, Message: Message{ID: fmt.Sprint("msg-", s)}})
	}
	cases := []struct {
		name       string
		before     int64
		limit      int
		wantStarts []int64
		hasOlder   bool
		next       int64
	}{
		{"from the end", 0, 2, []int64{14, 20}, true, 14},
		{"negative before means the end", -1, 2, []int64{14, 20}, true, 14},
		{"before a sequence", 14, 2, []int64{5, 9}, true, 5},
		{"before a sequence between entries", 12, 2, []int64{5, 9}, true, 5},
		{"last page", 5, 2, []int64{2}, false, 0},
		{"nothing older", 2, 2, nil, false, 0},
		{"default limit", 0, 0, []int64{2, 5, 9, 14, 20}, false, 0},
		{"limit larger than the log", 0, 50, []int64{2, 5, 9, 14, 20}, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page, hasOlder, next := Page(entries, c.before, c.limit)
			var starts []int64
			for _, en := range page {
				starts = append(starts, en.StartSequence)
			}
			if fmt.Sprint(starts) != fmt.Sprint(c.wantStarts) || hasOlder != c.hasOlder || next != c.next {
				t.Errorf("Page(before=%d, limit=%d) = %v, %v, %d; want %v, %v, %d", c.before, c.limit, starts, hasOlder, next, c.wantStarts, c.hasOlder, c.next)
			}
		})
	}
}

func TestPage_CapsLimit(t *testing.T) {
	entries := make([]Entry, 1500)
	for i := range entries {
		entries[i].StartSequence = int64(i + 1)
	}
	page, hasOlder, next := Page(entries, 0, 5000)
	if len(page) != MaxPageLimit || !hasOlder || next != 501 {
		t.Errorf("len %d, hasOlder %v, next %d", len(page), hasOlder, next)
	}
}
