package commands

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/state"
	"github.com/kandev/kandev/verdict"
)

func TestSelectLatest_PicksTheNewestSessionOfTheWorkspaceThatTheCommandCanActOn(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	sess := func(id, cwd, ws, st string, min int) *state.Session {
		return &state.Session{ID: id, Cwd: cwd, Workspace: ws, State: st, LastActivityAt: at(min)}
	}
	idle := verdict.Assessment{Verdict: verdict.Verdict{Reason: verdict.ReasonAgentNotRunning, IsResumable: true}, Badge: verdict.BadgeIdle, Resumable: true}
	paused := verdict.Assessment{Verdict: verdict.Verdict{Reason: verdict.ReasonAgentNotRunning}, Badge: verdict.BadgePaused}
	warm := verdict.Assessment{Verdict: verdict.Verdict{Reason: verdict.ReasonAgentRunning, IsResumable: true}, Badge: verdict.BadgeIdle, Resumable: true}
	running := verdict.Assessment{Verdict: verdict.Verdict{Reason: verdict.ReasonAgentRunning, IsResumable: true}, Badge: verdict.BadgeRunning, Resumable: true}
	parked := verdict.Assessment{Verdict: verdict.Verdict{Reason: verdict.ReasonAgentRunning, IsResumable: true}, Badge: verdict.BadgeWaitingForPermission, Resumable: true}
	here := workspaceScope{Root: "/src/app"}

	type c = latestCandidate
	cases := []struct {
		name  string
		cands []c
		need  need
		scope workspaceScope
		want  string // id, or "usage"/"notfound"
	}{
		{"another repository's newer session is out of scope", []c{
			{S: sess("other", "/src/lib", "lib", state.StateWaitingForInput, 9), A: idle},
			{S: sess("mine", "/src/app/sub", "app", state.StateWaitingForInput, 1), A: idle},
		}, needOpen, here, "mine"},
		{"a directory named like the repository but elsewhere is another workspace", []c{
			{S: sess("clone", "/other/app", "app", state.StateWaitingForInput, 9), A: idle},
			{S: sess("mine", "/src/app", "app", state.StateWaitingForInput, 1), A: idle},
		}, needAny, here, "mine"},
		{"a sibling directory with the root as prefix is not inside it", []c{
			{S: sess("near", "/src/app2", "app2", state.StateWaitingForInput, 9), A: idle},
			{S: sess("mine", "/src/app", "app", state.StateWaitingForInput, 1), A: idle},
		}, needAny, here, "mine"},
		{"a worktree kandev made for the repository is in it", []c{
			{S: &state.Session{ID: "wt", Cwd: "/src/app-kandev-abc", Workspace: "app", State: state.StateWaitingForInput, LastActivityAt: at(9),
				Worktree: &worktree.Worktree{Path: "/src/app-kandev-abc", Owned: true}}, A: idle},
			{S: sess("mine", "/src/app", "app", state.StateWaitingForInput, 1), A: idle},
		}, needOpen, here, "wt"},
		{"--all-workspaces looks everywhere", []c{
			{S: sess("other", "/src/lib", "lib", state.StateWaitingForInput, 9), A: idle},
			{S: sess("mine", "/src/app", "app", state.StateWaitingForInput, 1), A: idle},
		}, needOpen, workspaceScope{All: true}, "other"},
		{"--workspace names another", []c{
			{S: sess("other", "/src/lib", "lib", state.StateWaitingForInput, 1), A: idle},
			{S: sess("mine", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
		}, needOpen, workspaceScope{Name: "lib"}, "other"},
		{"reads take a finished session", []c{
			{S: sess("done", "/src/app", "app", state.StateCompleted, 9)},
			{S: sess("open", "/src/app", "app", state.StateWaitingForInput, 1), A: idle},
		}, needAny, here, "done"},
		{"prompt skips a finished or failed session", []c{
			{S: sess("failed", "/src/app", "app", state.StateFailed, 9)},
			{S: sess("done", "/src/app", "app", state.StateCompleted, 8)},
			{S: sess("open", "/src/app", "app", state.StateWaitingForInput, 1), A: paused},
		}, needOpen, here, "open"},
		{"resume skips a paused session, as list --resumable does", []c{
			{S: sess("paused", "/src/app", "app", state.StateWaitingForInput, 9), A: paused},
			{S: sess("idle", "/src/app", "app", state.StateWaitingForInput, 1), A: idle},
		}, needResumable, here, "idle"},
		{"close takes the warm one", []c{
			{S: sess("cold", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
			{S: sess("warm", "/src/app", "app", state.StateWaitingForInput, 1), A: warm},
		}, needLive, here, "warm"},
		{"cancel takes the one running a turn", []c{
			{S: sess("warm", "/src/app", "app", state.StateWaitingForInput, 9), A: warm},
			{S: sess("busy", "/src/app", "app", state.StateRunning, 1), A: running},
		}, needTurn, here, "busy"},
		{"approve takes the one waiting for permission", []c{
			{S: sess("busy", "/src/app", "app", state.StateRunning, 9), A: running},
			{S: sess("parked", "/src/app", "app", state.StateRunning, 1), A: parked},
		}, needPermission, here, "parked"},
		{"rewind skips a session whose turn runs", []c{
			{S: sess("busy", "/src/app", "app", state.StateRunning, 9), A: running},
			{S: sess("idle", "/src/app", "app", state.StateWaitingForInput, 1), A: idle},
		}, needIdle, here, "idle"},
		{"detach takes the one the caller holds", []c{
			{S: sess("free", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
			{S: sess("held", "/src/app", "app", state.StateWaitingForInput, 1), A: idle, MyLease: true},
		}, needLease, here, "held"},
		{"of two equally recent the greater id wins, as list orders them", []c{
			{S: sess("20261201-090000-aaaa", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
			{S: sess("20261201-090000-bbbb", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
		}, needOpen, here, "20261201-090000-bbbb"},
		{"the tie-break does not depend on the order the home lists them", []c{
			{S: sess("20261201-090000-bbbb", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
			{S: sess("20261201-090000-aaaa", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
		}, needOpen, here, "20261201-090000-bbbb"},
		{"an imported copy, active as of its import, wins over its original", []c{
			{S: sess("20261201-090000-ffff", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
			{S: sess("20261201-090000-0000", "/src/app", "app", state.StateWaitingForInput, 10), A: idle},
		}, needOpen, here, "20261201-090000-0000"},
		{"a tie skips a session the command cannot act on", []c{
			{S: sess("20261201-090000-bbbb", "/src/app", "app", state.StateCompleted, 9)},
			{S: sess("20261201-090000-aaaa", "/src/app", "app", state.StateWaitingForInput, 9), A: idle},
		}, needOpen, here, "20261201-090000-aaaa"},
		{"sessions here but none the command can act on is a usage error", []c{
			{S: sess("done", "/src/app", "app", state.StateCompleted, 9)},
		}, needOpen, here, "usage"},
		{"no session here is not found", []c{
			{S: sess("other", "/src/lib", "lib", state.StateWaitingForInput, 9), A: idle},
		}, needAny, here, "notfound"},
		{"an empty home is not found", nil, needAny, here, "notfound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := selectLatest(tc.cands, tc.need, tc.scope)
			got := ""
			switch {
			case err == nil:
				got = s.ID
			case ExitCode(err) == ExitUsage:
				got = "usage"
			case ExitCode(err) == ExitNotFound:
				got = "notfound"
			default:
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

func TestSelectLatest_SaysWhereItLookedAndWhatElseThereIs(t *testing.T) {
	cands := []latestCandidate{
		{S: &state.Session{ID: "o1", Cwd: "/src/lib", State: state.StateWaitingForInput}},
		{S: &state.Session{ID: "o2", Cwd: "/src/lib", State: state.StateWaitingForInput}},
	}
	_, err := selectLatest(cands, needAny, workspaceScope{Root: "/src/app"})
	if !errors.Is(err, state.ErrNotFound) || !strings.Contains(err.Error(), "/src/app") ||
		!strings.Contains(err.Error(), "2 in other workspaces") || !strings.Contains(err.Error(), "--all-workspaces") {
		t.Fatalf("error %v", err)
	}
	cands = []latestCandidate{{S: &state.Session{ID: "d", Cwd: "/src/app", State: state.StateCompleted}}}
	_, err = selectLatest(cands, needResumable, workspaceScope{Root: "/src/app"})
	if !errors.Is(err, errNoneEligible) || !strings.Contains(err.Error(), "list --resumable") {
		t.Fatalf("error %v", err)
	}
}
