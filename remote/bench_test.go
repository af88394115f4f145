package remote

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// gitDaemon serves a fresh bare repository over git:// (skipped, visibly,
// when git daemon cannot start) and returns its URL.
func gitDaemon(tb testing.TB) string {
	tb.Helper()
	return gitDaemonIn(tb, tb.TempDir())
}

// gitDaemonIn serves root/p.git, a fresh bare repository, over git://.
func gitDaemonIn(tb testing.TB, root string) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("SKIP: git is not installed")
	}
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", filepath.Join(root, "p.git")).CombinedOutput(); err != nil {
		tb.Skipf("SKIP: git init: %v %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Skip("SKIP: cannot listen: ", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// git-daemon itself: a kill of `git daemon` would leave its child serving.
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		tb.Skip("SKIP: git --exec-path: ", err)
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1", "--port="+strconv.Itoa(port), "--base-path="+root, root)
	if err := cmd.Start(); err != nil {
		tb.Skip("SKIP: git daemon: ", err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		if i > 500 {
			tb.Skip("SKIP: git daemon did not listen")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "git://127.0.0.1:" + strconv.Itoa(port) + "/p.git"
}

// homeWithSession makes a home holding session id with n events.
func homeWithSession(tb testing.TB, id string, n int) *state.Home {
	tb.Helper()
	h, err := state.OpenHome(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if err := h.CreateSession(&state.Session{ID: id, Title: "bench", State: state.StateWaitingForInput, Agent: "demo", CreatedAt: time.Now().UTC()}); err != nil {
		tb.Fatal(err)
	}
	appendTurn(tb, h, id, 1, n)
	return h
}

// appendTurn appends n realistic events from seq on and returns their bytes.
func appendTurn(tb testing.TB, h *state.Home, id string, seq, n int) int {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"seq":%d,"timestamp":"2026-12-01T10:00:%02d.%06dZ","type":"agent_message","session_id":"%s","turn_id":"t%d","role":"assistant","content":"step %d of the work: reading the file, changing the function, running the tests again (%d)"}`+"\n", seq+i, i%60, seq+i, id, (seq+i)/20, seq+i, (seq+i)*7919)
	}
	f, err := os.OpenFile(h.LogPath(id), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	f.WriteString(b.String())
	f.Close()
	return b.Len()
}

// BenchmarkPush_OneMoreTurnOfA10000EventSession measures the push of one
// 20-event turn appended to a 10,000-event session over git daemon: time,
// and the pack sent against the bytes the turn appended.
func BenchmarkPush_OneMoreTurnOfA10000EventSession(b *testing.B) {
	url := gitDaemon(b)
	id := "20261201-100000-bench001"
	h := homeWithSession(b, id, 10000)
	e := Env{Home: h, Opt: Options{Remote: url, Machine: "A", Dir: h.Dir}}
	ctx := context.Background()
	if _, err := Push(ctx, e, id); err != nil {
		b.Fatal(err)
	}
	var sent, appended int
	packSent = func(n int) { sent += n }
	defer func() { packSent = nil }()
	seq := 10001
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		appended += appendTurn(b, h, id, seq, 20)
		seq += 20
		b.StartTimer()
		res, err := Push(ctx, e, id)
		if err != nil || res.Action != "pushed" {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(sent)/float64(b.N), "pack-bytes/op")
	b.ReportMetric(float64(appended)/float64(b.N), "turn-bytes/op")
	b.ReportMetric(float64(sent)/float64(appended), "pack/turn")
}

// BenchmarkPull_All1000Sessions measures pull --all of 1,000 sessions into
// an empty home over git daemon.
func BenchmarkPull_All1000Sessions(b *testing.B) {
	url := gitDaemon(b)
	src, err := state.OpenHome(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s, err := openStore(src)
	if err != nil {
		b.Fatal(err)
	}
	// Build the 1,000 commits in one store and send them in one push.
	var ups []refUpdate
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("20261201-100000-%08x", i)
		rec := fmt.Sprintf(`{"format":%d,"id":%q,"title":"session %d","state":"WAITING_FOR_INPUT","agent":"demo"}`+"\n", state.Format, id, i)
		var log strings.Builder
		for j := 1; j <= 20; j++ {
			fmt.Fprintf(&log, `{"seq":%d,"timestamp":"2026-12-01T10:00:00Z","type":"agent_message","session_id":"%s","content":"message %d"}`+"\n", j, id, j)
		}
		bt, err := s.buildSession(plumbing.ZeroHash, Meta{Format: snapshotFormat, ID: id, LogBytes: int64(log.Len()), LogLines: 20}, []byte(rec), []byte(log.String()), 1, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		ups = append(ups, refUpdate{Name: sessionRef(id), New: bt.commit, Objects: bt.objects})
	}
	if err := s.wire(url, 0).push(context.Background(), ups); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h, err := state.OpenHome(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, failed, err := PullAll(context.Background(), Env{Home: h, Opt: Options{Remote: url, Machine: "B", Dir: h.Dir}}, false)
		if err != nil || len(failed) > 0 || len(res) != 1000 {
			b.Fatal(len(res), failed, err)
		}
	}
}

// BenchmarkClaim_RoundTrip measures taking a session's claim (one look,
// one compare-and-swap) and giving it up again, over git daemon.
func BenchmarkClaim_RoundTrip(b *testing.B) {
	url := gitDaemon(b)
	id := "20261201-100000-bench002"
	h := homeWithSession(b, id, 100)
	ctx := context.Background()
	if _, err := Push(ctx, Env{Home: h, Opt: Options{Remote: url, Machine: "A", Dir: h.Dir}}, id); err != nil {
		b.Fatal(err)
	}
	os.Setenv("KANDEV_MACHINE", "A")
	defer os.Unsetenv("KANDEV_MACHINE")
	t, err := ClaimTurns(ctx, h, &config.Config{}, id, nil)
	if err != nil || t == nil {
		b.Fatal(t, err)
	}
	if err := t.Idle(ctx); err != nil {
		b.Fatal(err)
	}
	var claim time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		began := time.Now()
		if err := t.Busy(ctx); err != nil {
			b.Fatal(err)
		}
		claim += time.Since(began)
		if err := t.Idle(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(claim.Milliseconds())/float64(b.N), "claim-ms/op")
}
