package board

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/verdict"
)

func card(id, badge, project string, ago time.Duration) Card {
	return Card{ID: id, Badge: badge, Title: "title of " + id, Agent: "demo", Project: project,
		Activity: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC).Add(-ago)}
}

func idsOf(cs []Card) string {
	s := ""
	for _, c := range cs {
		s += c.ID + " "
	}
	return s
}

func TestArrange_NewestFirstUnreadableLastDoneFolded(t *testing.T) {
	var cards []Card
	for i := range DoneCollapseAt + 5 {
		cards = append(cards, card(fmt.Sprintf("d%02d", i), verdict.BadgeDone, "p", time.Duration(i)*time.Minute))
	}
	cards = append(cards, card("old", verdict.BadgeFailed, "p", time.Hour), card("new", verdict.BadgeWaitingForPermission, "p", 0),
		UnreadableCard("bad", "corrupt"))
	a := Arrange(cards, Filter{}, false)
	if got := idsOf(a.Cols[NeedsYou]); got != "new old bad " {
		t.Errorf("Needs you: %s", got)
	}
	if len(a.Cols[Done]) != DoneCollapseAt || a.DoneTotal != DoneCollapseAt+5 || a.Collapsed() != 5 || a.Cols[Done][0].ID != "d00" {
		t.Errorf("Done folded: %d shown of %d, first %s", len(a.Cols[Done]), a.DoneTotal, a.Cols[Done][0].ID)
	}
	if a := Arrange(cards, Filter{}, true); len(a.Cols[Done]) != DoneCollapseAt+5 || a.Collapsed() != 0 {
		t.Errorf("expanded Done shows %d", len(a.Cols[Done]))
	}
}

func TestFilter_MatchesTextAnywhereAndOneProject(t *testing.T) {
	c := card("20261207-x", verdict.BadgeRunning, "kandev", 0)
	c.Title = "Fix the LOGIN test"
	for _, tc := range []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true}, {Filter{Text: "login"}, true}, {Filter{Text: "KANDEV"}, true}, {Filter{Text: "running"}, true},
		{Filter{Text: "1207-x"}, true}, {Filter{Text: "nope"}, false},
		{Filter{Project: "kandev"}, true}, {Filter{Project: "other"}, false}, {Filter{Project: "kandev", Text: "nope"}, false},
	} {
		if got := tc.f.Match(&c); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.f, got, tc.want)
		}
	}
}

func TestActionFor_OffersWhatTheCommandCanDo(t *testing.T) {
	warm := time.Now()
	parked := card("s", verdict.BadgeWaitingForPermission, "p", 0)
	parked.Parked = "permission"
	question := parked
	question.Parked = "question"
	running := card("s", verdict.BadgeRunning, "p", 0)
	idle := card("s", verdict.BadgeIdle, "p", 0)
	warmIdle := idle
	warmIdle.WarmUntil = &warm
	done := card("s", verdict.BadgeDone, "p", 0)
	bad := UnreadableCard("s", "corrupt")
	for _, tc := range []struct {
		name, act string
		c         *Card
		args      string // "" when refused
		fg        bool
	}{
		{"approve a parked permission", ActApprove, &parked, "[approve s]", false},
		{"approve refuses a question", ActApprove, &question, "", false},
		{"deny a question", ActDeny, &question, "[deny s]", false},
		{"answer a question", ActAnswer, &question, "[answer s]", false},
		{"answer refuses a permission", ActAnswer, &parked, "", false},
		{"cancel a running turn", ActCancel, &running, "[cancel s]", false},
		{"cancel refuses an idle session", ActCancel, &idle, "", false},
		{"close a warm owner", ActClose, &warmIdle, "[close s]", false},
		{"close refuses a session with no owner", ActClose, &idle, "", false},
		{"resume in the foreground", ActResume, &idle, "[resume s]", true},
		{"resume refuses a finished session", ActResume, &done, "", false},
		{"attach in the foreground", ActAttach, &running, "[attach s]", true},
		{"attach refuses a finished session", ActAttach, &done, "", false},
		{"transcript of a finished session", ActTranscript, &done, "[transcript s]", false},
		{"nothing on an unreadable record", ActTranscript, &bad, "", false},
		{"nothing selected", ActAttach, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, why := ActionFor(tc.act, tc.c)
			if tc.args == "" {
				if why == "" {
					t.Fatalf("offered %v", a.Args)
				}
				return
			}
			if why != "" || fmt.Sprint(a.Args) != tc.args || a.Foreground != tc.fg {
				t.Fatalf("got %v fg=%v (%s), want %s fg=%v", a.Args, a.Foreground, why, tc.args, tc.fg)
			}
		})
	}
}

func TestWriteText_FoldsDoneAndNamesTheFlagThatShowsIt(t *testing.T) {
	var cards []Card
	for i := range DoneCollapseAt + 5 {
		cards = append(cards, card(fmt.Sprintf("d%02d", i), verdict.BadgeDone, "p", time.Duration(i)*time.Minute))
	}
	var b strings.Builder
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	if err := WriteText(&b, cards, Filter{}, false, Renderer(&b, false), now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "Done (15)") || !strings.Contains(out, "… and 5 more (kandev board --once --all-done") ||
		strings.Contains(out, "d14") || strings.Contains(out, "\x1b") {
		t.Fatalf("folded:\n%s", out)
	}
	b.Reset()
	if err := WriteText(&b, cards, Filter{}, true, Renderer(&b, false), now); err != nil || !strings.Contains(b.String(), "d14") {
		t.Fatalf("--all-done:\n%s", b.String())
	}
}
