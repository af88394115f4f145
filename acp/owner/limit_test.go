package owner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/schedule"
	"github.com/kandev/kandev/state"
)

// fakeScheduler stands in for the OS scheduler (which the e2e tests run for
// real) and records what the owner asked of it.
type fakeScheduler struct {
	submitted []schedule.Job
	cancelled []state.ScheduledRecover
}

func (f *fakeScheduler) install(t *testing.T) {
	sub, can := submitSchedule, cancelSchedule
	submitSchedule = func(_ string, j schedule.Job) (state.ScheduledRecover, error) {
		f.submitted = append(f.submitted, j)
		return state.ScheduledRecover{At: j.At, Via: "fake", Handle: j.Name}, nil
	}
	cancelSchedule = func(s state.ScheduledRecover) error { f.cancelled = append(f.cancelled, s); return nil }
	t.Cleanup(func() { submitSchedule, cancelSchedule = sub, can })
}

func TestOwner_ResumeAfterLimitIsScheduledAtMostMaxAttemptsTimesInARow(t *testing.T) {
	var f fakeScheduler
	f.install(t)
	r := newRig(t)
	r.cfg.Session.ResumeAfterLimit = true
	r.cfg.Session.Restart.MaxAttempts = 2
	id := r.create("")
	r.mustRun(r.job(id, ""))
	limited := func(resumes int) error {
		t.Helper()
		if _, err := r.home.UpdateSession(id, func(s *state.Session) error { s.LimitResumes = resumes; return nil }); err != nil {
			t.Fatal(err)
		}
		_, err := r.run(context.Background(), r.job(id, "/limit 30"))
		if !errors.Is(err, acp.ErrRateLimited) {
			t.Fatalf("want ErrRateLimited, got %v", err)
		}
		return err
	}
	err := limited(1) // one automatic resume ran in a row: one more is allowed
	if len(f.submitted) != 1 || !strings.Contains(err.Error(), "is scheduled for") {
		t.Fatalf("not scheduled within the budget: %v (%d submitted)", err, len(f.submitted))
	}
	j := f.submitted[0]
	if got := strings.Join(j.Argv[1:], " "); got != "--home "+r.home.Dir+" recover "+id {
		t.Fatalf("scheduled %q", got)
	}
	if s, _ := r.home.LoadSession(id); s.Limit == nil || s.Limit.Scheduled == nil || s.Limit.Scheduled.Handle != j.Name {
		t.Fatalf("the record does not show the schedule: %+v", s.Limit)
	}
	err = limited(2) // the budget is spent
	if len(f.submitted) != 1 || !strings.Contains(err.Error(), "No kandev recover was scheduled: 2 automatic resumes") {
		t.Fatalf("scheduled past the budget: %v (%d submitted)", err, len(f.submitted))
	}
	// The next turn that runs drops the limit and cancels its schedule.
	r.mustRun(r.job(id, "/say on"))
	if s, _ := r.home.LoadSession(id); s.Limit != nil || len(f.cancelled) != 1 || f.cancelled[0].Handle != j.Name {
		t.Fatalf("after a turn: limit %+v, cancelled %+v", s.Limit, f.cancelled)
	}
	r.cfg.Session.ResumeAfterLimit = false
	if err := limited(0); len(f.submitted) != 1 || strings.Contains(err.Error(), "scheduled") {
		t.Fatalf("scheduled with resume_after_limit off: %v", err)
	}
}
