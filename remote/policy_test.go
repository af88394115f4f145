package remote

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/worktree"
	"github.com/kandev/kandev/setup"
	"github.com/kandev/kandev/state"
)

func TestCompare_DecidesPushPullOrRefusalFromWhatEachSideAppended(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	cases := []struct {
		name string
		in   Sides
		want Step
	}{
		{"nothing anywhere", Sides{}, UpToDate},
		{"only here: push it", Sides{LocalExists: true, LocalExtra: b("a\n")}, SendLocal},
		{"only on the remote: pull it", Sides{RemoteExists: true, Descends: true, RemoteExtra: b("a\n")}, TakeRemote},
		{"both agree", Sides{LocalExists: true, RemoteExists: true, Descends: true}, UpToDate},
		{"this machine appended", Sides{LocalExists: true, RemoteExists: true, Descends: true, LocalExtra: b("x\n")}, SendLocal},
		{"the remote appended", Sides{LocalExists: true, RemoteExists: true, Descends: true, RemoteExtra: b("y\n")}, TakeRemote},
		{"both appended while apart", Sides{LocalExists: true, RemoteExists: true, Descends: true, LocalExtra: b("x\n"), RemoteExtra: b("y\n")}, Diverged},
		{"a pull cut off after appending completes", Sides{LocalExists: true, RemoteExists: true, Descends: true, LocalExtra: b("y\n"), RemoteExtra: b("y\nz\n")}, TakeRemote},
		{"a push cut off after the remote took it is up to date", Sides{LocalExists: true, RemoteExists: true, Descends: true, LocalExtra: b("x\n"), RemoteExtra: b("x\n")}, UpToDate},
		{"the remote took part, more was appended since", Sides{LocalExists: true, RemoteExists: true, Descends: true, LocalExtra: b("x\nw\n"), RemoteExtra: b("x\n")}, SendLocal},
		{"the remote was rewritten (not descending)", Sides{LocalExists: true, RemoteExists: true, Descends: false}, Diverged},
	}
	for _, c := range cases {
		if got := Compare(c.in); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDecideClaim_OnlyAnExpiredReleasedOrOwnClaimMayBeTaken(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	live := &Claim{Machine: "B", Generation: 3, ExpiresAt: now.Add(time.Minute)}
	expired := &Claim{Machine: "B", Generation: 3, ExpiresAt: now.Add(-time.Second)}
	released := &Claim{Machine: "B", Generation: 3, ExpiresAt: now.Add(time.Minute), Released: true}
	mine := &Claim{Machine: "A", Generation: 2, ExpiresAt: now.Add(time.Minute)}
	cases := []struct {
		name string
		in   ClaimInput
		want ClaimVerdict
	}{
		{"never claimed", ClaimInput{Machine: "A", Now: now}, ClaimTake},
		{"another machine's live claim", ClaimInput{Current: live, CurrentHash: "h3", Machine: "A", Now: now}, ClaimRefused},
		{"another machine's expired claim", ClaimInput{Current: expired, CurrentHash: "h3", Machine: "A", Now: now}, ClaimTake},
		{"a released claim", ClaimInput{Current: released, CurrentHash: "h3", Machine: "A", Now: now}, ClaimTake},
		{"this machine's own live claim from a dead process", ClaimInput{Current: mine, CurrentHash: "h2", Machine: "A", Now: now}, ClaimTake},
		{"the claim this machine holds", ClaimInput{Current: mine, CurrentHash: "h2", HeldHash: "h2", Held: mine, Machine: "A", Now: now}, ClaimKeep},
		{"taken over while held: fenced", ClaimInput{Current: live, CurrentHash: "h3", HeldHash: "h2", Held: mine, Machine: "A", Now: now}, ClaimFenced},
		{"taken over and released since: fenced", ClaimInput{Current: released, CurrentHash: "h3", HeldHash: "h2", Held: mine, Machine: "A", Now: now}, ClaimFenced},
	}
	for _, c := range cases {
		if got := DecideClaim(c.in); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNextClaim_IsOneGenerationOnAndExpiresAfterTheTTL(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := NextClaim(&Claim{Generation: 4}, "A", 7, now, time.Minute)
	if c.Generation != 5 || c.Machine != "A" || c.PID != 7 || !c.ExpiresAt.Equal(now.Add(time.Minute)) || c.Released {
		t.Fatalf("next claim %+v", c)
	}
	if NextClaim(nil, "A", 7, now, time.Minute).Generation != 1 {
		t.Fatal("the first claim is generation 1")
	}
}

func TestNextClaim_NeverWrapsTheGeneration(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		cur, out int64
	}{
		{"at the maximum it stays there", math.MaxInt64, math.MaxInt64},
		{"one below the maximum reaches it", math.MaxInt64 - 1, math.MaxInt64},
		{"a negative one starts again at 1", -5, 1},
		{"zero starts at 1", 0, 1},
	}
	for _, c := range cases {
		if got := NextClaim(&Claim{Generation: c.cur}, "A", 7, now, time.Minute).Generation; got != c.out {
			t.Errorf("%s: got %d, want %d", c.name, got, c.out)
		}
	}
	held := &Claim{Machine: "A", Generation: math.MaxInt64}
	other := &Claim{Machine: "B", Generation: math.MaxInt64, ExpiresAt: now.Add(time.Minute)}
	if v := DecideClaim(ClaimInput{Current: other, CurrentHash: "h2", HeldHash: "h1", Held: held, Machine: "A", Now: now}); v != ClaimFenced {
		t.Errorf("taken over at the maximum generation: %v, want fenced", v)
	}
}

func TestClaimBounded_HonouredToItsOwnExpiryAtMostADayAfterFirstSeen(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	far := &Claim{Machine: "X", ExpiresAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}
	near := &Claim{Machine: "X", ExpiresAt: now.Add(time.Minute)}
	// A laptop's default claim (15 minutes) seen by a CI machine whose own
	// TTL is 2 minutes: honoured to its own expiry.
	laptop := &Claim{Machine: "laptop", ExpiresAt: now.Add(15 * time.Minute)}
	cases := []struct {
		name       string
		c          *Claim
		seen       time.Time
		wantExpiry time.Time
	}{
		{"year 9999, first seen now: now + 24 h", far, time.Time{}, now.Add(MaxClaimLife)},
		{"year 9999, seen 25 hours ago: expired", far, now.Add(-25 * time.Hour), now.Add(-time.Hour)},
		{"within a day: as written", near, now, near.ExpiresAt},
		{"longer than this machine's TTL: as written", laptop, now.Add(-10 * time.Minute), laptop.ExpiresAt},
		{"seen in the future (clock moved back): counts from now", far, now.Add(time.Hour), now.Add(MaxClaimLife)},
	}
	for _, c := range cases {
		got := c.c.Bounded(c.seen, now)
		if !got.ExpiresAt.Equal(c.wantExpiry) {
			t.Errorf("%s: expires %s, want %s", c.name, got.ExpiresAt, c.wantExpiry)
		}
	}
	if far.Bounded(now.Add(-25*time.Hour), now).Live(now) {
		t.Error("a claim pinned to 9999 is still live a day after it was first seen")
	}
	if !laptop.Bounded(now.Add(-10*time.Minute), now).Live(now.Add(5 * time.Minute)) {
		t.Error("a live 15-minute claim counts as expired for an observer with a shorter TTL")
	}
}

func TestViaGitCommand_SSHAndHTTPSGoThroughGitItself(t *testing.T) {
	cases := map[string]bool{
		"/srv/git/project.git":               false,
		"../project.git":                     false,
		"file:///srv/git/project.git":        false,
		"git://127.0.0.1:9418/project.git":   false,
		"ssh://git@example.com/org/project":  true,
		"git@github.com:org/project.git":     true,
		"https://github.com/org/project.git": true,
		"http://127.0.0.1:8080/git/project":  true,
		`C:\Users\me\project.git`:            false,
		"project":                            false,
	}
	for u, want := range cases {
		if got := viaGitCommand(u); got != want {
			t.Errorf("%s: via git %v, want %v", u, got, want)
		}
	}
}

func TestSameRepository_AsAUserWouldJudge(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		a, b string
		want bool
	}{
		{"https://github.com/org/p.git", "https://github.com/org/p", true},
		{"https://GitHub.com/org/p/", "ssh://git@github.com/org/p.git", true},
		{"git@github.com:org/p.git", "https://github.com/org/p", true},
		{"https://github.com/org/p", "https://github.com/org/q", false},
		{dir + "/p.git", "file://" + dir + "/p.git", true},
		{dir + "/p.git", dir + "/q.git", false},
	}
	for _, c := range cases {
		if got := SameRepository(c.a, c.b); got != c.want {
			t.Errorf("%s vs %s: %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestMapWorktree_PicksTheCloneOfTheSameRepositoryOnTheSameBranch(t *testing.T) {
	url := "https://example.com/org/p.git"
	other := Clone{Path: "/w/other", Branch: "main", URLs: []string{"https://example.com/org/q"}}
	offBranch := Clone{Path: "/w/p-dev", Branch: "dev", URLs: []string{url}}
	match := Clone{Path: "/w/p", Branch: "main", URLs: []string{"git@example.com:org/p"}}
	cases := []struct {
		name   string
		origin string
		branch string
		clones []Clone
		want   string
	}{
		{"same repository and branch", url, "main", []Clone{other, offBranch, match}, "/w/p"},
		{"only on another branch: pause", url, "main", []Clone{offBranch}, ""},
		{"no clone of it: pause", url, "main", []Clone{other}, ""},
		{"no origin recorded", "", "main", []Clone{match}, ""},
		{"detached HEAD recorded: any branch", url, "", []Clone{offBranch}, "/w/p-dev"},
	}
	for _, c := range cases {
		got, ok := MapWorktree(c.origin, c.branch, c.clones)
		if (c.want != "") != ok || got.Path != c.want {
			t.Errorf("%s: got %q %v, want %q", c.name, got.Path, ok, c.want)
		}
	}
}

func TestLocalRecord_ClearsTheOtherMachinesProcessesAndMapsTheWorktree(t *testing.T) {
	until := time.Now()
	rec := state.Session{ID: "s", Cwd: "/home/a/p/sub", Workspace: "p", OwnerPID: 10, AgentPID: 11, AgentStart: "x", WarmUntil: &until,
		InboxOffset: 999, InboxServed: 9, OwnerDetached: true, ParkedRequests: []state.ParkedRequest{{}}, PermissionPending: true,
		Limit:    &state.UsageLimit{Scheduled: &state.ScheduledRecover{Via: "at", Handle: "7"}},
		Worktree: &worktree.Worktree{Path: "/home/a/p", Branch: "main", Valid: true, Owned: true}}
	got := LocalRecord(rec, nil, Origin{Rel: "sub"}, Clone{Path: "/srv/b/proj"}, true)
	if got.OwnerPID != 0 || got.AgentPID != 0 || got.AgentStart != "" || got.WarmUntil != nil {
		t.Fatalf("processes of the other machine kept: %+v", got)
	}
	if got.InboxOffset != 0 || got.InboxServed != 0 || got.OwnerDetached || got.ParkedRequests != nil || got.PermissionPending || got.Limit.Scheduled != nil {
		t.Fatalf("machine-local state of the other machine kept: %+v", got)
	}
	local := state.Session{InboxOffset: 5, InboxServed: 1, Limit: &state.UsageLimit{Scheduled: &state.ScheduledRecover{Via: "at", Handle: "3"}}}
	if kept := LocalRecord(rec, &local, Origin{}, Clone{}, false); kept.InboxOffset != 5 || kept.InboxServed != 1 || kept.Limit.Scheduled.Handle != "3" {
		t.Fatalf("this machine's own state was not kept: %+v", kept)
	}
	if got.Worktree.Path != "/srv/b/proj" || got.Worktree.Branch != "main" || got.Worktree.Owned || got.Cwd != filepath.Join("/srv/b/proj", "sub") || got.Workspace != "proj" {
		t.Fatalf("mapped record: %+v %+v", got, got.Worktree)
	}
	unmapped := LocalRecord(rec, nil, Origin{}, Clone{}, false)
	if unmapped.Worktree.Path != "/home/a/p" || unmapped.Cwd != rec.Cwd || unmapped.Worktree.Owned {
		t.Fatalf("unmapped record changed its worktree: %+v", unmapped.Worktree)
	}
}

func TestPulledTrust_OnlyServersThisMachineTrustedAsTheyAreRunWithoutKandevTrust(t *testing.T) {
	srv := []state.MCPServer{{Name: "fs", Command: "mcp-fs", Env: map[string]string{"T": "${T}"}}}
	changed := []state.MCPServer{{Name: "fs", Command: "sh", Env: map[string]string{"T": "${T}"}}}
	cases := []struct {
		name   string
		local  *state.Session
		pulled []state.MCPServer
		want   bool
	}{
		{"no servers: nothing to trust", nil, nil, false},
		{"new here with servers: waits", nil, srv, true},
		{"trusted here, same servers: stays trusted", &state.Session{MCPConfig: srv}, srv, false},
		{"trusted here, servers changed there: waits", &state.Session{MCPConfig: srv}, changed, true},
		{"waiting here, same servers: still waits", &state.Session{MCPConfig: srv, TrustPending: true}, srv, true},
	}
	for _, c := range cases {
		if got := setup.PulledTrust(c.local, c.pulled); got != c.want {
			t.Errorf("%s: pending %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStore_EverythingItWritesIsPrivate(t *testing.T) {
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := openStore(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.buildSession([20]byte{}, Meta{ID: "x", LogLines: 1}, []byte("{}\n"), []byte("{\"seq\":1}\n"), 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := MachineID(h); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(h.Dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == h.Dir {
			return err
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
}

func TestWithoutSecret_DropsTheTokenOfAURLAndNothingElse(t *testing.T) {
	cases := map[string]string{
		"https://x-access-token:ghs_abc123@github.com/org/p.git": "https://x-access-token@github.com/org/p.git",
		"https://me@example.com/p.git":                           "https://me@example.com/p.git",
		"ssh://git@example.com:2222/p.git":                       "ssh://git@example.com:2222/p.git",
		"git@github.com:org/p.git":                               "git@github.com:org/p.git",
		"/srv/git/p.git":                                         "/srv/git/p.git",
	}
	for in, want := range cases {
		if got := WithoutSecret(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
