package schedule

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/state"
)

func TestOrder_MostPreciseSchedulerFirst(t *testing.T) {
	if got := Order("linux"); !reflect.DeepEqual(got, []string{SystemdRun, At}) {
		t.Errorf("linux: %v", got)
	}
	if got := Order("darwin"); !reflect.DeepEqual(got, []string{Launchd, At}) {
		t.Errorf("darwin: %v", got)
	}
}

func TestSystemdArgs_ATransientUserTimerForTheExactSecond(t *testing.T) {
	j := Job{Name: "kandev-recover-x", At: time.Date(2026, 12, 1, 15, 4, 5, 0, time.UTC), Argv: []string{"/bin/kandev", "recover", "x"}, Env: []string{"KANDEV_HOME=/h"}}
	want := []string{"--user", "--unit=kandev-recover-x", "--collect", "--quiet", "--on-calendar=2026-12-01 15:04:05 UTC", "--timer-property=AccuracySec=1s", "--setenv=KANDEV_HOME=/h", "--", "/bin/kandev", "recover", "x"}
	if got := SystemdArgs(j); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestAtTime_TheMinuteAtOrAfter(t *testing.T) {
	cases := []struct {
		in   time.Time
		want time.Time
	}{
		{time.Date(2026, 12, 1, 15, 4, 0, 0, time.Local), time.Date(2026, 12, 1, 15, 4, 0, 0, time.Local)},
		{time.Date(2026, 12, 1, 15, 4, 1, 0, time.Local), time.Date(2026, 12, 1, 15, 5, 0, 0, time.Local)},
		{time.Date(2026, 12, 31, 23, 59, 30, 0, time.Local), time.Date(2027, 1, 1, 0, 0, 0, 0, time.Local)},
	}
	for _, c := range cases {
		if got := AtTime(c.in); got != c.want.Format("200601021504") {
			t.Errorf("AtTime(%v) = %s, want %s", c.in, got, c.want.Format("200601021504"))
		}
	}
}

func TestAtScript_QuotesEverything(t *testing.T) {
	got := AtScript(Job{Argv: []string{"/opt/k dev/kandev", "recover", "it's"}, Env: []string{"KANDEV_HOME=/h o"}})
	want := "KANDEV_HOME='/h o'; export KANDEV_HOME\nexec '/opt/k dev/kandev' 'recover' 'it'\\''s'\n"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestAtJobNumber(t *testing.T) {
	if n, ok := AtJobNumber("warning: commands will be executed using /bin/sh\njob 12 at Tue Dec  1 15:01:00 2026\n"); !ok || n != "12" {
		t.Fatalf("got %q %v", n, ok)
	}
	if _, ok := AtJobNumber("Can't open /var/run/atd.pid"); ok {
		t.Fatal("a number from an error")
	}
}

// RequireAtd skips, visibly, unless at and a running atd are here; as root
// it starts atd when it is installed but not running (a container has no
// init to start it).
func requireAtd(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("at"); err != nil {
		t.Skip("SKIP: at is not installed (.ci/run installs Debian's at)")
	}
	if exec.Command("pgrep", "-x", "atd").Run() != nil {
		if os.Geteuid() != 0 || exec.Command("atd").Run() != nil {
			t.Skip("SKIP: atd is not running and cannot be started here")
		}
	}
}

func TestSubmit_TheRealAtRunsTheJobAfterItsTimeAndCancelRemovesOne(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SKIP: at on Linux only in this test")
	}
	requireAtd(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	at := time.Now().Add(2 * time.Second)
	j := Job{Name: "kandev-test-ran", At: at, Argv: []string{"/bin/sh", "-c", `date +%s > "$OUT"`}, Env: []string{"OUT=" + ran}}
	h, err := submitVia(At, j)
	if err != nil {
		t.Fatal(err)
	}
	gone := Job{Name: "kandev-test-cancelled", At: at, Argv: []string{"/bin/sh", "-c", "touch " + filepath.Join(dir, "cancelled")}}
	hc, err := submitVia(At, gone)
	if err != nil {
		t.Fatal(err)
	}
	if err := Cancel(stateOf(At, hc)); err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("atq").Output(); strings.Contains(string(out), hc+"\t") {
		t.Fatalf("atq still lists the cancelled job %s:\n%s", hc, out)
	}
	deadline := time.Now().Add(75 * time.Second) // at runs on the minute
	for {
		if b, err := os.ReadFile(ran); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			exec.Command("atrm", h).Run()
			t.Fatal("the at job did not run within 75 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st, err := os.Stat(ran); err != nil || st.ModTime().Before(at) {
		t.Fatalf("the job ran before its time: %v", st.ModTime())
	}
	if _, err := os.Stat(filepath.Join(dir, "cancelled")); err == nil {
		t.Fatal("the cancelled job ran")
	}
	// Cancelling a job that already ran is no error.
	if err := Cancel(stateOf(At, h)); err != nil {
		t.Fatalf("cancel after the run: %v", err)
	}
}

func TestSubmit_SystemdUserTimerWhereThereIsAUserInstance(t *testing.T) {
	if _, err := exec.LookPath("systemd-run"); err != nil {
		t.Skip("SKIP: systemd-run is not installed")
	}
	if err := exec.Command("systemctl", "--user", "is-system-running").Run(); err != nil {
		if out, _ := exec.Command("systemctl", "--user", "is-system-running").CombinedOutput(); !strings.Contains(string(out), "running") && !strings.Contains(string(out), "degraded") {
			t.Skipf("SKIP: no systemd user instance here (%s); at is the fallback", strings.TrimSpace(string(out)))
		}
	}
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	j := Job{Name: "kandev-test-" + strings.ReplaceAll(filepath.Base(dir), "_", "-"), At: time.Now().Add(3 * time.Second), Argv: []string{"/bin/sh", "-c", "touch " + ran}}
	h, err := submitVia(SystemdRun, j)
	if err != nil {
		t.Fatal(err)
	}
	defer Cancel(stateOf(SystemdRun, h))
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(ran); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the systemd timer did not run within 20 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func stateOf(via, handle string) state.ScheduledRecover {
	return state.ScheduledRecover{Via: via, Handle: handle}
}
