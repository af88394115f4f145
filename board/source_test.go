package board

import (
	"os"
	"testing"

	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

func TestSource_ACorruptRecordIsAnUnreadableCardNeverAnError(t *testing.T) {
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := &state.Session{ID: "20261207-120000-aaaaaaaa", Title: "fine", State: state.StateWaitingForInput}
	if err := h.CreateSession(good); err != nil {
		t.Fatal(err)
	}
	bad := "20261207-120000-bbbbbbbb"
	if err := os.WriteFile(h.RecordPath(bad), []byte(`{"format": 1, "id": "2026`), 0o600); err != nil {
		t.Fatal(err)
	}
	src := &Source{Home: h, Assess: func(s *state.Session) Facts { return Facts{Badge: verdict.BadgeIdle} }}
	lo, err := src.LoadAll()
	if err != nil || len(lo.Cards) != 2 {
		t.Fatalf("LoadAll: %d cards, %v", len(lo.Cards), err)
	}
	c, gone := src.Reload(bad)
	if gone || c.Problem == "" || c.Column() != NeedsYou {
		t.Fatalf("a torn record read again: %+v gone=%v", c, gone)
	}
	if err := os.Remove(h.RecordPath(bad)); err != nil {
		t.Fatal(err)
	}
	if _, gone := src.Reload(bad); !gone {
		t.Fatal("a removed record is not gone")
	}
	if c, _ := src.Reload(good.ID); c.Title != "fine" || c.Problem != "" {
		t.Fatalf("a good record: %+v", c)
	}
}
