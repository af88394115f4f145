package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// On Linux only: on macOS the supervisor reads its process facts through
// state (and initialises it), and Windows has no supervisor.
// The agent's supervisor (internal/supervise) runs and exits in its own
// package's initialisation, which Go runs as soon as the packages it imports
// are initialised: before go-git, the MCP SDK and the rest, as long as it
// imports nothing that is initialised late (the strings package is, because
// its import path sorts after most of the binary's). What the supervisor's
// process initialises before it exits, measured: 23 packages, 20,368 bytes
// (unicode's tables are 11,400 of them), against 146 packages and 251,720
// bytes when the supervisor ran from acp's initialisation.
const (
	supervisorInitBudgetPackages = 30
	supervisorInitBudgetBytes    = 32 << 10
)

func TestStartup_TheAgentSupervisorSkipsTheRestOfTheBinarysInitialisation(t *testing.T) {
	bin := buildStatic(t)
	watch, err := os.Open(os.DevNull) // fd 3: the owner's watch pipe, at EOF at once
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	cmd := exec.Command(bin, "/bin/true")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "KANDEV_AGENT_SUPERVISOR=1")
	cmd.ExtraFiles = []*os.File{watch}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // it kills its group when the owner is gone
	out, _ := cmd.CombinedOutput()
	tr := readInitTrace(t, out)
	total := 0
	for _, p := range tr {
		total += p.bytes
		for _, l := range linkedFor {
			if under(p.pkg, l.pkg) {
				t.Errorf("the supervisor's process initialised %s (for %s) before it ran: it imports a package initialised after that one (see internal/supervise's package comment)", p.pkg, l.feature)
			}
		}
	}
	if len(tr) == 0 {
		t.Fatalf("no inittrace lines from the supervisor:\n%s", out)
	}
	if len(tr) > supervisorInitBudgetPackages || total > supervisorInitBudgetBytes {
		t.Errorf("the supervisor's process initialised %d packages, %d bytes, before it ran (budget %d, %d)", len(tr), total, supervisorInitBudgetPackages, supervisorInitBudgetBytes)
	}
}
