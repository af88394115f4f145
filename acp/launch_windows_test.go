package acp

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/internal/proc"
)

// treeRole makes the test binary a stand-in: "owner" launches an "agent"
// with Launch and prints the agent's and its child's pids; "agent" starts a
// "grandchild" (a process of its own tree), prints its pid and waits; the
// grandchild waits. None ends by itself within the test.
const treeRole = "KANDEV_TEST_TREE_ROLE"

func TestJobHelperProcess(t *testing.T) {
	switch os.Getenv(treeRole) {
	case "owner":
		p, err := Launch(LaunchSpec{Command: []string{os.Args[0], "-test.run=^TestJobHelperProcess$"}, Env: map[string]string{treeRole: "agent"}})
		if err != nil {
			os.Exit(3)
		}
		line, _ := bufio.NewReader(p.Stdout).ReadString('\n')
		os.Stdout.WriteString(strconv.Itoa(p.PID) + " " + line)
		time.Sleep(time.Minute)
		os.Exit(0)
	case "agent":
		cmd := exec.Command(os.Args[0], "-test.run=^TestJobHelperProcess$")
		cmd.Env = append(os.Environ(), treeRole+"=grandchild")
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	case "grandchild":
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	t.Skip("a helper process for the Launch tests")
}

func TestJob_KillEndsTheAgentAndEverythingItStarted(t *testing.T) {
	p, err := Launch(LaunchSpec{
		Command: []string{os.Args[0], "-test.run=^TestJobHelperProcess$"},
		Env:     map[string]string{treeRole: "agent"},
		Home:    t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	grandchild, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || grandchild == 0 {
		p.Kill()
		t.Fatalf("the agent printed %q, %v; want its child's pid", line, err)
	}
	gcStart := proc.ProcessStart(grandchild)
	if gcStart == "" || !proc.ProcessAlive(p.PID, p.Start) {
		p.Kill()
		t.Fatalf("before Kill: agent alive %v, grandchild start %q", proc.ProcessAlive(p.PID, p.Start), gcStart)
	}
	p.Kill()
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the agent did not end within 5 s of Kill")
	}
	if proc.AliveAfter(grandchild, gcStart, 5*time.Second) {
		terminate(grandchild)
		t.Fatalf("the agent's child %d outlived the job", grandchild)
	}
}

func TestJob_TheAgentAndItsChildrenDieWithTheirOwnerHoweverItDies(t *testing.T) {
	owner := exec.Command(os.Args[0], "-test.run=^TestJobHelperProcess$")
	owner.Env = append(os.Environ(), treeRole+"=owner")
	out, _ := owner.StdoutPipe()
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	var agent, grandchild int
	if f := strings.Fields(line); len(f) == 2 {
		agent, _ = strconv.Atoi(f[0])
		grandchild, _ = strconv.Atoi(f[1])
	}
	if err != nil || agent == 0 || grandchild == 0 {
		t.Fatalf("the owner printed %q, %v; want the agent's and its child's pids", line, err)
	}
	agentStart, gcStart := proc.ProcessStart(agent), proc.ProcessStart(grandchild)
	if agentStart == "" || gcStart == "" {
		t.Fatalf("before the owner died: agent start %q, grandchild start %q", agentStart, gcStart)
	}
	owner.Process.Kill() // TerminateProcess: the owner runs no code of its own on the way out
	owner.Wait()
	for name, pr := range map[string]struct {
		pid   int
		start string
	}{"agent": {agent, agentStart}, "agent's child": {grandchild, gcStart}} {
		if proc.AliveAfter(pr.pid, pr.start, 5*time.Second) {
			terminate(pr.pid)
			t.Errorf("the %s (%d) outlived its killed owner", name, pr.pid)
		}
	}
}
