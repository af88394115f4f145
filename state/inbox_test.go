package state

import (
	"bytes"
	"os"
	"testing"
	"time"
)

func TestScrubInput_AServedPromptLeavesNoTextAndEveryOffsetStands(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := NewID(time.Now())
	if err := h.CreateSession(&Session{ID: id, State: StateWaitingForInput}); err != nil {
		t.Fatal(err)
	}
	const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
	for _, text := range []string{"first", "use " + secret + " now", "third"} {
		if err := h.Enqueue(id, &Input{Kind: InputPrompt, Text: text, Permissions: "defer"}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := h.ReadInbox(id, 0)
	if err := h.ScrubInput(id, before[1]); err != nil {
		t.Fatal(err)
	}
	if err := h.ScrubInput(id, before[1]); err != nil { // twice is once
		t.Fatal(err)
	}
	b, _ := os.ReadFile(h.InboxPath(id))
	if bytes.Contains(b, []byte(secret)) {
		t.Fatalf("the served prompt is still in the inbox:\n%s", b)
	}
	after, _ := h.ReadInbox(id, 0)
	if len(after) != 3 {
		t.Fatalf("%d inputs after the scrub, want 3", len(after))
	}
	for i := range after {
		if after[i].Offset != before[i].Offset || after[i].ID != before[i].ID {
			t.Fatalf("input %d moved: %+v, was %+v", i, after[i], before[i])
		}
	}
	if !after[1].Scrubbed || after[1].Text != "" || after[1].Permissions != "defer" {
		t.Fatalf("scrubbed input %+v", after[1])
	}
	if after[0].Text != "first" || after[2].Text != "third" {
		t.Fatalf("the other inputs changed: %+v %+v", after[0], after[2])
	}
	// Reading from the scrubbed entry's end still finds the next one.
	if rest, _ := h.ReadInbox(id, after[1].Offset); len(rest) != 1 || rest[0].Text != "third" {
		t.Fatalf("inbox after the scrubbed entry: %+v", rest)
	}
}

func TestCheckLeaseFor_AnotherHoldersLeaseRefusesWithAdviceForTheCommand(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := NewID(time.Now())
	if err := h.CreateSession(&Session{ID: id, State: StateWaitingForInput}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := h.Attach(id, "editor:zed", time.Minute, now); err != nil {
		t.Fatal(err)
	}
	var held *leaseHeldError
	if err := h.CheckLeaseFor(LeaseOpChange, id, "cli:me", now); !asLease(err, &held) || !isErr(err, ErrLeaseHeld) || !bytes.Contains([]byte(err.Error()), []byte("--force to change it anyway")) {
		t.Fatalf("another holder's lease: %v", err)
	}
	if err := h.CheckLeaseFor(LeaseOpChange, id, "editor:zed", now); err != nil {
		t.Fatalf("the holder itself: %v", err)
	}
	if err := h.CheckLeaseFor(LeaseOpChange, id, "cli:me", now.Add(2*time.Minute)); err != nil {
		t.Fatalf("an expired lease: %v", err)
	}
}

// A withdrawn prompt is no longer pending, loses its text, and every other
// entry keeps its offset; withdrawing again, or a line that is not the
// input's any more, changes nothing.
func TestWithdrawInput_ARefusedPromptIsNoLongerPendingAndOffsetsStand(t *testing.T) {
	h, err := OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{ID: "20261201-100000-withdraw"}
	if err := h.CreateSession(s); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "a refused one", "third"} {
		if err := h.Enqueue(s.ID, &Input{Kind: InputPrompt, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := h.ReadInbox(s.ID, 0)
	if err := h.WithdrawInput(s.ID, before[1]); err != nil {
		t.Fatal(err)
	}
	if err := h.WithdrawInput(s.ID, before[1]); err != nil {
		t.Fatal(err)
	}
	after, _ := h.ReadInbox(s.ID, 0)
	if len(after) != 3 {
		t.Fatalf("%d inputs after the withdrawal, want 3", len(after))
	}
	for i := range after {
		if after[i].Start != before[i].Start || after[i].Offset != before[i].Offset {
			t.Fatalf("input %d moved: %d-%d, was %d-%d", i, after[i].Start, after[i].Offset, before[i].Start, before[i].Offset)
		}
	}
	if after[1].Kind != InputWithdrawn || after[1].Text != "" || after[0].Text != "first" || after[2].Text != "third" {
		t.Fatalf("after withdrawing the second: %+v", after)
	}
	if n := h.PendingInputs(s); n != 2 {
		t.Fatalf("%d prompts pending, want 2", n)
	}
}
