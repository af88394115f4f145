package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// atJobs is what atq lists: job numbers.
func atJobs(t *testing.T) map[string]bool {
	t.Helper()
	out, _ := exec.Command("atq").Output()
	jobs := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			jobs[f[0]] = true
		}
	}
	return jobs
}

func TestLimit_ATimerThatASIGKILLCutOffWhileItWasScheduledIsFoundByTheNextCommand(t *testing.T) {
	requireAtd(t)
	realAt, err := exec.LookPath("at")
	if err != nil {
		t.Skip("SKIP: at is not installed")
	}
	w, id := keyWorld(t)
	w.config("[session]\nresume_after_limit = true\n")
	// The schedulers kandev asks: no systemd user manager (so at is used),
	// and an at that takes the job, says so, and then is slow to return:
	// kandev is killed while it waits for the answer.
	bin, took := t.TempDir(), filepath.Join(t.TempDir(), "took")
	os.WriteFile(filepath.Join(bin, "systemd-run"), []byte("#!/bin/sh\necho 'Failed to connect to bus' >&2\nexit 1\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "at"), []byte("#!/bin/sh\nif [ \"$1\" = -c ]; then exec "+realAt+" \"$@\"; fi\n"+realAt+" \"$@\" > "+took+" 2>&1\ncat "+took+"\nsleep 30\n"), 0o755)
	for i, kv := range w.env {
		if strings.HasPrefix(kv, "PATH=") {
			w.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	before := atJobs(t)
	cmd := exec.Command(kandevBin, "prompt", id, "--linger", "0", "/limit 600")
	cmd.Dir, cmd.Env = w.cwd, w.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "at to take the job", func() bool {
		b, _ := os.ReadFile(took)
		return strings.Contains(string(b), "job ")
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	var orphan string
	for job := range atJobs(t) {
		if !before[job] {
			orphan = job
		}
	}
	if orphan == "" {
		t.Fatal("at holds no new job")
	}
	t.Cleanup(func() { exec.Command("atrm", orphan).Run() })
	if st := w.mustRun("status", id).stdout; !strings.Contains(st, "was cut off while the scheduler was asked") {
		t.Fatalf("status does not say the scheduling was cut off:\n%s", st)
	}
	// The next owner finds it and records it, as if the killed one had.
	w.mustRun("resume", id, "--linger", "0", "--no-continue")
	if sc := w.session(id).Limit.Scheduled; sc == nil || sc.Pending || sc.Via != "at" || sc.Handle != orphan {
		t.Fatalf("the next owner did not record at job %s: %+v", orphan, sc)
	}
	// close cancels it, as it cancels any recorded one.
	r := w.mustRun("close", id)
	if !strings.Contains(r.stdout, "cancelled the kandev recover") || atJobs(t)[orphan] {
		t.Fatalf("close left at job %s that a killed prompt scheduled: %s", orphan, r)
	}
	if l := w.session(id).Limit; l != nil && l.Scheduled != nil {
		t.Fatalf("the record still shows a schedule: %+v", l.Scheduled)
	}
}
