package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	matrixOnce sync.Once
	matrixBin  string
	matrixErr  error
)

// crashMatrix is scripts/crashmatrix, built once for the tests that run it
// (beside the kandev binary): a link of it is seconds of CPU.
func crashMatrix(t *testing.T) string {
	t.Helper()
	matrixOnce.Do(func() {
		matrixBin = filepath.Join(filepath.Dir(kandevBin), "crashmatrix")
		if out, err := exec.Command("go", "build", "-o", matrixBin, "../scripts/crashmatrix").CombinedOutput(); err != nil {
			matrixErr = fmt.Errorf("building the crash matrix: %v\n%s", err, out)
		}
	})
	if matrixErr != nil {
		t.Fatal(matrixErr)
	}
	return matrixBin
}

// TestCrashMatrix_SeededTrialsOfEachSignalAndOperationKeepTheRecoveryRules
// runs the randomized crash matrix (scripts/crashmatrix) briefly, with fixed
// seeds: a few demo-agent turns per signal (SIGKILL, SIGTERM, SIGTERM twice,
// SIGHUP, SIGINT), a few SIGKILLs inside import, prune, repair and stop, and
// a few inside kandev acp's session/load of an interrupted session,
// and a few of live owners: inside kandev approve, of a detached owner holding a
// parked permission request, and of a warm owner around its linger's expiry;
// and at named points of what a remote brings: inside kandev trust, inside a
// checked pull before it writes, and before the release of a claim taken for
// a turn that cannot run; and on the default path, signals to the command
// that follows a turn and to the detached owner that runs it.
// The matrix exits 1 when any run broke a rule; its report names the run.
func TestCrashMatrix_SeededTrialsOfEachSignalAndOperationKeepTheRecoveryRules(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("SKIP: the crash matrix runs real processes for about half a minute; not in -short")
	}
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("SKIP: the crash matrix needs `script` (util-linux) for its permission-question trials")
	}
	matrix := crashMatrix(t)
	cases := []struct {
		name string
		args []string
	}{
		{"SIGKILL", []string{"-trials", "turn", "-signals", "SIGKILL", "-n", "4", "-seed", "11"}},
		{"SIGTERM", []string{"-trials", "turn", "-signals", "SIGTERM", "-n", "4", "-seed", "12"}},
		{"SIGTERMx2", []string{"-trials", "turn", "-signals", "SIGTERMx2", "-n", "3", "-seed", "13"}},
		{"SIGHUP", []string{"-trials", "turn", "-signals", "SIGHUP", "-n", "3", "-seed", "14"}},
		{"SIGINT", []string{"-trials", "turn", "-signals", "SIGINT", "-n", "3", "-seed", "15"}},
		{"operations", []string{"-trials", "import,prune,repair,stop", "-n", "8", "-seed", "16"}},
		{"kandev acp load", []string{"-trials", "acp-load", "-n", "4", "-seed", "17"}},
		{"live owners", []string{"-trials", "approve,parked,expiry", "-n", "6", "-seed", "17"}},
		{"what a remote brings", []string{"-trials", "trust,pull,claim-release", "-n", "6", "-seed", "18"}},
		{"default path: the following command and its detached owner", []string{"-trials", "follower,detached", "-n", "10", "-seed", "19"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-kandev", kandevBin, "-dir", t.TempDir(),
				"-scenarios", "say,read,write,mix,perm-ask"}, c.args...)
			out, err := exec.Command(matrix, args...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "ALL INVARIANTS HELD") {
				t.Fatalf("crashmatrix %s: %v\n%s", strings.Join(c.args, " "), err, out)
			}
		})
	}
}

// TestCrashMatrix_TwoMachinesNeverRunTwoTurnsAtOnePositionNorLoseOne runs
// the matrix's two-machine trials: two homes and one remote (a bare path or
// git daemon), random schedules of prompts on both, kills of either owner,
// a frozen remote, each machine's own claim_ttl_seconds, warm and cold
// owners. After each trial both machines converge, and the matrix checks
// that no two turns share a log position, that no acknowledged turn is
// lost, and that every divergence was refused by name and recovered by the
// commands the refusal printed. 60 trials, eight at a time;
// KANDEV_TWO_MACHINE_TRIALS and KANDEV_TWO_MACHINE_SEED run others.
func TestCrashMatrix_TwoMachinesNeverRunTwoTurnsAtOnePositionNorLoseOne(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("SKIP: the two-machine trials run real processes for minutes; not in -short")
	}
	for _, tool := range []string{"git", "script"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIP: the two-machine trials need %s", tool)
		}
	}
	// 60 trials in every run: 200 cost 8-12 minutes of two shared cores,
	// more than CI has beside the rest; KANDEV_TWO_MACHINE_TRIALS=200 runs them.
	n, seed := "60", "4343"
	if v := os.Getenv("KANDEV_TWO_MACHINE_TRIALS"); v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			t.Fatalf("KANDEV_TWO_MACHINE_TRIALS=%q is no number", v)
		}
		n = v
	}
	if v := os.Getenv("KANDEV_TWO_MACHINE_SEED"); v != "" {
		seed = v
	}
	matrix := crashMatrix(t)
	out, err := exec.Command(matrix, "-kandev", kandevBin, "-dir", t.TempDir(), "-trials", "two-machine", "-n", n, "-seed", seed, "-j", "8").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ALL INVARIANTS HELD") {
		t.Fatalf("crashmatrix -trials two-machine -n %s -seed %s: %v\n%s", n, seed, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "runs ") || strings.HasPrefix(line, "seed ") {
			t.Log(line)
		}
	}
}
