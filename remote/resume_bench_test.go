package remote

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// resumeRig is two machines sharing one git daemon: home A ran the
// session and pushed it, home B pulled it into its own clone. Both homes
// and the server's repository are saved right after, so every timed
// resume starts from the same state.
type resumeRig struct {
	b       *testing.B
	bin, id string
	a, bm   machine
	saved   []string // directories restored before every run
}

type machine struct {
	name, home, clone string
}

func (r *resumeRig) env(m machine) []string {
	return append(os.Environ(), "KANDEV_HOME="+m.home, "KANDEV_MACHINE="+m.name, "CI=1", "NO_COLOR=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
}

func (r *resumeRig) run(m machine, args ...string) string {
	r.b.Helper()
	cmd := exec.Command(r.bin, args...)
	cmd.Dir, cmd.Env = m.clone, r.env(m)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.b.Fatalf("kandev %v on %s: %v\n%s", args, m.name, err, out)
	}
	return string(out)
}

func (r *resumeRig) git(dir string, args ...string) {
	r.b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, r.env(r.a)
	if out, err := cmd.CombinedOutput(); err != nil {
		r.b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// cp copies a directory tree as it is (modes, symlinks).
func (r *resumeRig) cp(from, to string) {
	r.b.Helper()
	if err := os.RemoveAll(to); err != nil {
		r.b.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		r.b.Skipf("SKIP: cp -a: %v %s", err, out)
	}
}

func (r *resumeRig) save() {
	for _, d := range r.saved {
		r.cp(d, d+".saved")
	}
}

func (r *resumeRig) restore() {
	for _, d := range r.saved {
		r.cp(d+".saved", d)
	}
}

// newResumeRig runs a session of several turns on A with the demo agent,
// SIGTERMs its owner mid-turn (the turn is cut: the session needs resume),
// and pulls it on B. With auto, both homes have [sync] auto = true (a push
// after every turn); else A pushes the session once by hand before the cut
// turn, and the cut turn reaches the remote when the stopped owner gives
// its claim up.
func newResumeRig(b *testing.B, bin string, auto bool) *resumeRig {
	root := b.TempDir()
	r := &resumeRig{b: b, bin: bin}
	url := gitDaemonIn(b, root)
	r.a = machine{"A", filepath.Join(root, "home-A"), filepath.Join(root, "clone-A")}
	r.bm = machine{"B", filepath.Join(root, "home-B"), filepath.Join(root, "clone-B")}
	seed := filepath.Join(root, "seed")
	r.git(root, "clone", "-q", url, seed)
	os.WriteFile(filepath.Join(seed, "README"), []byte("project\n"), 0o644)
	r.git(seed, "add", "README")
	r.git(seed, "commit", "-q", "-m", "init")
	r.git(seed, "push", "-q", "origin", "HEAD:main")
	for _, m := range []machine{r.a, r.bm} {
		r.git(root, "clone", "-q", "-b", "main", url, m.clone)
		os.MkdirAll(m.home, 0o700)
	}
	// Auto push: A pushes after every turn and when SIGTERM stops it.
	if auto {
		for _, m := range []machine{r.a, r.bm} {
			os.WriteFile(filepath.Join(m.home, "config.toml"), []byte("[sync]\nauto = true\n"), 0o600)
		}
	}
	r.id = strings.TrimSpace(strings.SplitN(r.run(r.a, "start", "--linger", "0", "remember apple"), "\n", 2)[0])
	// Six turns of about 60 streamed chunks each. One-line prompts: the
	// demo agent runs every line of its prompt as a directive, including
	// the lines of a resume context, and a real agent re-runs nothing it
	// is shown as history.
	for i := 1; i <= 6; i++ {
		text := strings.Repeat(fmt.Sprintf("step %d: the parser keeps the old API while the new one is written. ", i), 4)
		r.run(r.a, "prompt", r.id, "--linger", "0", "/stream 5 "+text)
	}
	if !auto {
		r.run(r.a, "push", r.id)
	}
	// The cut turn: SIGTERM once its prompt is sent.
	cmd := exec.Command(r.bin, "prompt", r.id, "--linger", "0", "/sleep 60000")
	cmd.Dir, cmd.Env = r.a.clone, r.env(r.a)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	log := filepath.Join(r.a.home, "sessions", r.id+".jsonl")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if evs := readEvents(b, log); len(evs) > 0 && evs[len(evs)-1].Type == eventlog.EventPromptSent {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			b.Fatal("the last turn's prompt was never sent")
		}
	}
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 143 {
		b.Fatalf("SIGTERM mid-turn: %v", err)
	}
	r.run(r.bm, "pull", r.id)
	for _, m := range []machine{r.a, r.bm} {
		if st := r.run(m, "status", r.id); !strings.Contains(st, "needs-resume") {
			b.Fatalf("%s: the session does not need resume:\n%s", m.name, st)
		}
	}
	r.saved = []string{r.a.home, r.bm.home, filepath.Join(root, "p.git")}
	r.save()
	return r
}

func readEvents(tb testing.TB, path string) []eventlog.Event {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var evs []eventlog.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e eventlog.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			evs = append(evs, e)
		}
	}
	return evs
}

// resumeOnce restores the saved state, runs `kandev resume` on m and
// returns its wall time and the part of it after the agent was started
// (agent_started is logged once the agent has answered initialize and the
// restore step: session/resume on A, session/new after a refused
// session/resume on B). It checks that the cut turn was continued.
func (r *resumeRig) resumeOnce(m machine, wantRestore string) (wall, afterStart time.Duration) {
	r.b.StopTimer()
	r.restore()
	log := filepath.Join(m.home, "sessions", r.id+".jsonl")
	before := len(readEvents(r.b, log))
	cmd := exec.Command(r.bin, "resume", r.id, "--linger", "0")
	cmd.Dir, cmd.Env = m.clone, r.env(m)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	r.b.StartTimer()
	began := time.Now()
	err := cmd.Run()
	wall = time.Since(began)
	r.b.StopTimer()
	if err != nil {
		r.b.Fatalf("resume on %s: %v\n%s", m.name, err, out.String())
	}
	evs := readEvents(r.b, log)[before:]
	var started time.Time
	var restore string
	ended := false
	for _, e := range evs {
		switch e.Type {
		case eventlog.EventAgentStarted:
			started, _ = time.Parse(time.RFC3339Nano, e.Timestamp)
			restore = e.Restore
		case eventlog.EventTurnEnded:
			ended = e.StopReason == "end_turn"
		}
	}
	if started.IsZero() || restore != wantRestore || !ended {
		r.b.Fatalf("resume on %s: restore %q (want %q), continued turn ended %v\n%s", m.name, restore, wantRestore, ended, out.String())
	}
	if os.Getenv("RESUMEBENCH_TRACE") != "" {
		for _, e := range evs {
			t, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
			fmt.Fprintf(os.Stderr, "%s %7.1f %s %s\n", m.name, ms1(t.Sub(began)), e.Type, e.Restore)
		}
		fmt.Fprintf(os.Stderr, "%s %7.1f exit\n", m.name, ms1(wall))
	}
	r.b.StartTimer()
	return wall, wall - started.Sub(began)
}

// BenchmarkResume_PulledAgainstLocal times `kandev resume` of a session
// cut mid-turn, on the machine it ran on (A) and on a second machine that
// pulled it (B), run for run in turn, each from the same saved state (both
// homes and the server's repository). A's demo agent still has its own
// session and restores it by session/resume; B's has none, so B's resume
// is refused and B restores through the resume context (the stored
// history sent with the continued turn): that replay is part of a pulled
// session's cost. Both claim the session on the remote, continue the cut
// turn once, and push it and give the claim up after (sync=manual: the
// session was pushed by hand, one push when the run ends; sync=auto: a
// push after the turn too). Reported: medians of the wall time, and of the
// time after agent_started (agent start-up, initialize and the restore
// step excluded), and their ratios B/A. RESUMEBENCH_TRACE=1 prints every
// run's events with their times from the start of the process.
//
//	go test ./remote -run X -bench Resume_PulledAgainstLocal -benchtime 21x
func BenchmarkResume_PulledAgainstLocal(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("SKIP: go is not on PATH")
	}
	bin := filepath.Join(b.TempDir(), "kandev")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, auto := range []bool{false, true} {
		name := "sync=manual"
		if auto {
			name = "sync=auto"
		}
		b.Run(name, func(b *testing.B) { benchResume(b, newResumeRig(b, bin, auto)) })
	}
}

func benchResume(b *testing.B, r *resumeRig) {
	events := len(readEvents(b, filepath.Join(r.a.home, "sessions", r.id+".jsonl")))
	var wallA, wallB, afterA, afterB []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, local := range order {
			if local {
				w, a := r.resumeOnce(r.a, "resume")
				wallA, afterA = append(wallA, ms1(w)), append(afterA, ms1(a))
			} else {
				w, a := r.resumeOnce(r.bm, "new")
				wallB, afterB = append(wallB, ms1(w)), append(afterB, ms1(a))
			}
		}
	}
	b.StopTimer()
	la, lb, xa, xb := median(wallA), median(wallB), median(afterA), median(afterB)
	if lb/la > 1.5 {
		b.Logf("the pulled resume took %.2fx the local one (target <= 1.5x)", lb/la)
	}
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(la, "local-ms")
	b.ReportMetric(lb, "pulled-ms")
	b.ReportMetric(lb/la, "pulled/local")
	b.ReportMetric(xa, "local-after-start-ms")
	b.ReportMetric(xb, "pulled-after-start-ms")
	b.ReportMetric(xb/xa, "pulled/local-after-start")
	b.Logf("%d events; wall ms A %v B %v; after agent_started ms A %v B %v", events, wallA, wallB, afterA, afterB)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms1(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
