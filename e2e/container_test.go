//go:build linux

package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// The container runtime's tests (docs/containers.md) run the demo agent in
// podman containers made from the host's own root (no image, no registry).
// .ci/podman-setup installs and configures podman; without it they skip.

var podmanOnce struct {
	sync.Once
	why string // "" when podman runs containers here
}

// requirePodman skips, visibly, unless podman can run a container here.
func requirePodman(t *testing.T) {
	t.Helper()
	podmanOnce.Do(func() {
		if _, err := exec.LookPath("podman"); err != nil {
			podmanOnce.why = "podman is not installed (.ci/podman-setup installs and configures it)"
			return
		}
		out, err := exec.Command("podman", "run", "--rm", "--network=host", "--rootfs", "/:O", "true").CombinedOutput()
		if err != nil {
			podmanOnce.why = "podman cannot run a container here (.ci/podman-setup configures it): " + strings.TrimSpace(string(out))
		}
	})
	if podmanOnce.why != "" {
		t.Skip("SKIP: " + podmanOnce.why)
	}
}

// containerOf is the id and state of session id's podman container ("" when none).
func containerOf(t *testing.T, id string) (string, string) { return podmanRow.containerOf(t, id) }

// removeContainerAtEnd removes session id's podman container when the test ends.
func removeContainerAtEnd(t *testing.T, id string) { podmanRow.removeAtEnd(t, id) }

// engineRow is one container engine the tests run on.
type engineRow struct {
	cli  string // the engine's CLI, on PATH
	toml string // the config.toml that makes kandev use it
}

var (
	podmanRow = engineRow{cli: "podman", toml: "[runtime]\nengine = \"podman\"\n"}
	dockerRow = engineRow{cli: "docker", toml: "[runtime]\nengine = \"docker\"\nimage = \"" + dockerImage + "\"\n"}
)

// forEachEngine runs test once per engine, each a subtest that skips,
// visibly, when its engine cannot run a container here.
func forEachEngine(t *testing.T, test func(t *testing.T, e engineRow)) {
	for _, e := range []engineRow{podmanRow, dockerRow} {
		t.Run(e.cli, func(t *testing.T) {
			if e.cli == "docker" {
				requireDocker(t)
			} else {
				requirePodman(t)
			}
			test(t, e)
		})
	}
}

// containerOf is the id and state of session id's container ("" when none).
func (e engineRow) containerOf(t *testing.T, id string) (string, string) {
	t.Helper()
	out, err := exec.Command(e.cli, "ps", "-a", "--filter", "label=kandev.session="+id, "--format", "{{.ID}}").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "", ""
	}
	ctr := strings.Fields(string(out))[0]
	st, _ := exec.Command(e.cli, "inspect", "--format", "{{.State.Status}}", ctr).Output()
	return ctr, strings.TrimSpace(string(st))
}

// startedAt is when container ctr was last started.
func (e engineRow) startedAt(ctr string) string {
	out, _ := exec.Command(e.cli, "inspect", "--format", "{{.State.StartedAt}}", ctr).Output()
	return strings.TrimSpace(string(out))
}

// removeAtEnd removes session id's container when the test ends.
func (e engineRow) removeAtEnd(t *testing.T, id string) {
	t.Cleanup(func() {
		if ctr, _ := e.containerOf(t, id); ctr != "" {
			args := []string{"rm", "-f", ctr}
			if e.cli == "podman" {
				args = append(args, "-t", "0") // no grace: the test is over
			}
			_ = exec.Command(e.cli, args...).Run()
		}
	})
}

// relayAgent is the agent process the session's relay runs: its pid in the
// container and when the relay started it.
func (w *world) relayAgent(id string) (pid int, started string) {
	w.t.Helper()
	var st struct {
		AgentPID  int    `json:"agent_pid"`
		StartedAt string `json:"started_at"`
	}
	b, err := os.ReadFile(filepath.Join(w.home, "sessions", id+".relay", "relay.json"))
	if err != nil {
		w.t.Fatalf("the relay left no state: %v", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		w.t.Fatal(err)
	}
	return st.AgentPID, st.StartedAt
}

// killHostKandevs SIGKILLs every kandev process of the machine a test
// stands for: every process of the test's binary with that home (the relay
// and the agent in the container run the same binary mounted at another
// path, and are left alone; so are the kandevs of tests running beside it).
func killHostKandevs(t *testing.T, home string) int {
	t.Helper()
	var killed []int
	for _, pid := range liveProcessesWithEnv("KANDEV_HOME", home) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if argv0, _, _ := strings.Cut(string(b), "\x00"); err == nil && argv0 == kandevBin && syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	// A killed process holds its locks until it has exited (a zombie holds
	// none): wait for that, so the next command finds no owner.
	waitFor(t, 10*time.Second, "the killed kandev processes to exit", func() bool {
		for _, pid := range killed {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
			if _, after, ok := strings.Cut(string(b), ") "); err == nil && ok && !strings.HasPrefix(after, "Z") {
				return false
			}
		}
		return true
	})
	return len(killed)
}

func TestContainer_AKilledKandevReattachesToTheSameAgentMidTurn(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e engineRow) {
		w := newWorld(t)
		w.config(e.toml)
		began := time.Now()
		id, r := w.start("--runtime", "container", "--linger", "60", "remember PEAR")
		if r.code != 0 {
			t.Fatalf("start: %s", r)
		}
		e.removeAtEnd(t, id)
		t.Logf("cold start in a %s container, first turn included: %s", e.cli, time.Since(began).Round(time.Millisecond))
		pid, started := w.relayAgent(id)

		// The turn writes a line, sleeps, writes another: every kandev dies
		// after the first line reached the log and before the second.
		cmd, _ := w.background("prompt", id, "--linger", "60", "/say before the kill\n/sleep 2500\n/say done sleeping")
		waitFor(t, 20*time.Second, "turn t2's first line in the log", func() bool {
			return strings.Contains(agentText(w.events(id), "t2"), "before the kill")
		})
		if strings.Contains(agentText(w.events(id), "t2"), "done sleeping") {
			t.Fatalf("turn t2 ended before the kill: the test proves nothing")
		}
		if n := killHostKandevs(t, w.home); n < 2 {
			t.Fatalf("killed %d kandev processes, want the command and its detached owner", n)
		}
		_ = cmd.Wait()
		if ctr, st := e.containerOf(t, id); st != "running" {
			t.Fatalf("container %q is %q after every kandev was killed, want running", ctr, st)
		}

		began = time.Now()
		r = w.mustRun("prompt", id, "--linger", "0", "recall")
		t.Logf("reattach, the rest of the sleep and one more turn: %s", time.Since(began).Round(time.Millisecond))
		if !strings.Contains(r.stdout, "PEAR") {
			t.Fatalf("recall after the reattach forgot PEAR: %s", r)
		}
		if p, s := w.relayAgent(id); p != pid || s != started {
			t.Fatalf("the agent is pid %d started %s, want the same process (pid %d started %s)", p, s, pid, started)
		}
		evs := w.events(id)
		assertNoSeqGap(t, evs)
		var starts []string
		for _, e := range ofType(evs, eventlog.EventTurnStarted) {
			starts = append(starts, e.TurnID+":"+e.Source)
		}
		// Each prompt is "user" when its own command ran it and "queued" when
		// an owner that was still warm served it: either, never a continuation.
		if len(starts) != 3 || starts[0] != "t1:initial" || !slices.Contains([]string{"t2:user", "t2:queued"}, starts[1]) || !slices.Contains([]string{"t3:user", "t3:queued"}, starts[2]) {
			t.Fatalf("turns started: %v, want t1, t2 (once) and t3: no continuation", starts)
		}
		// The whole turn, each line once: what the agent wrote before the
		// kill and what it wrote while no kandev ran.
		if got := agentText(evs, "t2"); got != "before the kill\ndone sleeping" {
			t.Fatalf("turn t2's answer in the log is %q, want each of its two lines once", got)
		}
		ended := 0
		for _, e := range ofType(evs, eventlog.EventTurnEnded) {
			if e.TurnID == "t2" {
				ended++
				if e.StopReason != eventlog.StopEndTurn {
					t.Fatalf("turn t2 ended %q, want end_turn (not repaired)", e.StopReason)
				}
			}
		}
		if ended != 1 {
			t.Fatalf("turn t2 ended %d times, want once", ended)
		}
		if m := ofType(evs, eventlog.EventMarker); len(m) > 0 {
			t.Fatalf("markers after a reattach (repair, recovery, continuation?): %+v", m)
		}
		reattached := false
		for _, e := range ofType(evs, eventlog.EventAgentStarted) {
			reattached = reattached || e.Restore == "reattach"
		}
		if !reattached {
			t.Fatalf("no agent_started with restore reattach: %+v", ofType(evs, eventlog.EventAgentStarted))
		}
		// linger 0: the command's owner stopped the container when it ended.
		if _, st := e.containerOf(t, id); st == "running" {
			t.Fatalf("the container still runs after an owner with --linger 0 ended")
		}
	})
}

func TestContainer_AContainerStoppedFromOutsideIsStartedAgainAndRestored(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	id := startInContainer(t, w, "--linger", "60", "remember PEAR")
	_, started := w.relayAgent(id)
	ctr, _ := containerOf(t, id)
	if out, err := exec.Command("podman", "kill", ctr).CombinedOutput(); err != nil {
		t.Fatalf("podman kill: %v %s", err, out)
	}
	// The warm owner sees its agent gone and exits (a prompt queued in the
	// instant before would meet the dead agent, as with a local one).
	waitFor(t, 10*time.Second, "the warm owner to exit", func() bool { return !w.ownerAlive(id) })
	r := w.mustRun("prompt", id, "--linger", "0", "recall")
	if !strings.Contains(r.stdout, "PEAR") {
		t.Fatalf("recall after the container was killed forgot PEAR: %s", r)
	}
	if _, s := w.relayAgent(id); s == started {
		t.Fatalf("the relay was not started again")
	}
	last := ofType(w.events(id), eventlog.EventAgentStarted)
	if got := last[len(last)-1].Restore; got != "resume" && got != "load" {
		t.Fatalf("restored by %q, want the ladder (resume or load)", got)
	}
	if c2, _ := containerOf(t, id); c2 != ctr {
		t.Fatalf("container %s replaced by %s, want the same one started again", ctr, c2)
	}
}

func TestContainer_AMissingEngineExits6WithOneLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[runtime]\nengine = \"no-such-engine\"\n")
	_, r := w.start("--runtime", "container", "hello")
	if r.code != 6 {
		t.Fatalf("want exit 6 for a missing engine: %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "no-such-engine") || !strings.Contains(lines[0], "install") {
		t.Fatalf("want one line naming the engine and what to do, got:\n%s", r.stderr)
	}
}

func TestContainer_PruneRemovesTheContainer(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e engineRow) {
		w := newWorld(t)
		w.config(e.toml)
		id, r := w.start("--runtime", "container", "--linger", "0", "hello")
		if r.code != 0 {
			t.Fatalf("start: %s", r)
		}
		e.removeAtEnd(t, id)
		if ctr, _ := e.containerOf(t, id); ctr == "" {
			t.Fatalf("no container for session %s", id)
		}
		w.mustRun("done", id)
		w.mustRun("prune")
		if ctr, st := e.containerOf(t, id); ctr != "" {
			t.Fatalf("container %s (%s) of pruned session %s is still there", ctr, st, id)
		}
	})
}

func TestContainer_StatusAndDoctorShowContainersAndWhatIsMissing(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	id := startInContainer(t, w, "--linger", "0", "hello")
	var st struct {
		Container struct{ ID, State string } `json:"container"`
	}
	decodeJSON(t, w.mustRun("status", id, "--json").stdout, &st)
	ctr, state := containerOf(t, id)
	if st.Container.ID != ctr || st.Container.State != state || ctr == "" {
		t.Fatalf("status shows container %+v, want %s %s", st.Container, ctr, state)
	}
	// A container whose session is gone, and a session whose container is gone.
	orphan := startInContainer(t, w, "--linger", "0", "hello")
	orphanCtr, _ := containerOf(t, orphan)
	if err := os.Remove(filepath.Join(w.home, "sessions", orphan+".json")); err != nil {
		t.Fatal(err)
	}
	_ = exec.Command("podman", "rm", "-f", ctr).Run()
	r := w.run("doctor")
	if !strings.Contains(r.stdout, "FAIL  container "+orphanCtr) || !strings.Contains(r.stdout, "rm -f "+orphanCtr) {
		t.Fatalf("doctor does not name the container whose session is gone:\n%s", r)
	}
	if !strings.Contains(r.stdout, "session "+id+": its container is gone") {
		t.Fatalf("doctor does not name the session whose container is gone:\n%s", r)
	}
	if !strings.Contains(w.mustRun("status", id).stdout, "container none") {
		t.Fatalf("status does not say the container is gone")
	}
}

func TestContainer_CloseStopsTheContainerWithOrWithoutItsOwner(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	id := startInContainer(t, w, "--linger", "60", "hello")
	if _, st := containerOf(t, id); st != "running" {
		t.Fatalf("the lingering owner's container is %q, want running", st)
	}
	w.mustRun("close", id)
	if _, st := containerOf(t, id); st == "running" {
		t.Fatalf("the container still runs after kandev close")
	}
	w.mustRun("prompt", id, "--linger", "60", "hello again")
	killHostKandevs(t, w.home) // the owner dies; the container outlives it
	if _, st := containerOf(t, id); st != "running" {
		t.Fatalf("the container is %q after its owner was killed, want running", st)
	}
	w.mustRun("close", "--all")
	if _, st := containerOf(t, id); st == "running" {
		t.Fatalf("the container of a killed owner still runs after kandev close --all")
	}
	// The linger ending stops it too.
	w.mustRun("prompt", id, "--linger", "1s", "hello once more")
	waitFor(t, 15*time.Second, "the container to stop when the linger ends", func() bool {
		_, st := containerOf(t, id)
		return st != "running"
	})
}

func TestContainer_APermissionAskedWhileNoKandevRanIsAnsweredOnReattach(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	id := startInContainer(t, w, "--linger", "60", "hello")
	notes := filepath.Join(w.cwd, "notes.txt")
	cmd, _ := w.background("--permissions", "approve-all", "prompt", id, "--linger", "60", "/say started\n/sleep 1200\n/write "+notes+" written-in-the-container")
	waitForAgentInTurn(t, w, id, "t2")
	killHostKandevs(t, w.home)
	_ = cmd.Wait()
	// The agent asks for the write while no kandev runs; the request waits in the relay.
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(notes); err == nil {
		t.Fatal("the file was written while no kandev ran")
	}
	w.mustRun("--permissions", "approve-all", "resume", id, "--linger", "0")
	if b, err := os.ReadFile(notes); err != nil || string(b) != "written-in-the-container" {
		t.Fatalf("notes.txt = %q, %v: the pending write was not answered on reattach", b, err)
	}
	evs := w.events(id)
	if len(ofType(evs, eventlog.EventPermissionResolved)) != 1 {
		t.Fatalf("permission_resolved: %+v", ofType(evs, eventlog.EventPermissionResolved))
	}
	if m := ofType(evs, eventlog.EventMarker); len(m) > 0 {
		t.Fatalf("markers after a reattach: %+v", m)
	}
}

func TestContainer_AnEngineReachedOverSSHRunsTheAgentAndReattaches(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	root := t.TempDir()
	url, _ := startSSHD(t, root)
	userAt, rest, _ := strings.Cut(strings.TrimPrefix(url, "ssh://"), "@127.0.0.1:")
	port, _, _ := strings.Cut(rest, "/")
	sock := filepath.Join(root, "podman.sock")
	svc := exec.Command("podman", "system", "service", "--time=0", "unix://"+sock)
	if err := svc.Start(); err != nil {
		t.Skip("SKIP: podman system service: ", err)
	}
	t.Cleanup(func() { _ = svc.Process.Kill(); _ = svc.Wait() })
	waitFor(t, 10*time.Second, "podman's API socket", func() bool { _, err := os.Stat(sock); return err == nil })

	w := newWorld(t)
	w.env = append(w.env, "CONTAINER_HOST=ssh://"+userAt+"@127.0.0.1:"+port+sock, "CONTAINER_SSHKEY="+filepath.Join(root, "ssh", "client_key"))
	id, r := w.start("--runtime", "container", "--linger", "60", "remember LIME")
	if r.code != 0 {
		t.Fatalf("start over ssh: %s", r)
	}
	removeContainerAtEnd(t, id)
	cmd, _ := w.background("prompt", id, "--linger", "60", "/say started\n/sleep 1500\n/say over ssh")
	waitForAgentInTurn(t, w, id, "t2")
	killHostKandevs(t, w.home)
	_ = cmd.Wait()
	r = w.mustRun("prompt", id, "--linger", "0", "recall")
	evs := w.events(id)
	if !strings.Contains(agentText(evs, "t2"), "over ssh") || !strings.Contains(r.stdout, "LIME") {
		t.Fatalf("the reattach over ssh lost the turn or the conversation: %s\n%+v", r, evs)
	}
	if m := ofType(evs, eventlog.EventMarker); len(m) > 0 {
		t.Fatalf("markers after a reattach over ssh: %+v", m)
	}
}

func TestContainer_AMissingImageExits6WithOneLineAtOnce(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	w.config("[runtime]\nimage = \"localhost/kandev-no-such-image:1\"\n")
	began := time.Now()
	_, r := w.start("--runtime", "container", "hello")
	if r.code != 6 {
		t.Fatalf("want exit 6 for a missing image: %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "kandev-no-such-image") || !strings.Contains(lines[0], "pull the image first") {
		t.Fatalf("want one line naming the image and what to do, got:\n%s", r.stderr)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("a missing image took %s: kandev must not try a registry", took)
	}
}

func TestContainer_StopOfASessionNoKandevRunsStopsItsContainer(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	id := startInContainer(t, w, "--linger", "60", "hello")
	cmd, _ := w.background("prompt", id, "--linger", "60", "/sleep 5000")
	waitFor(t, 20*time.Second, "turn t2's prompt sent", func() bool {
		return len(ofType(w.events(id), eventlog.EventPromptSent)) == 2
	})
	killHostKandevs(t, w.home)
	_ = cmd.Wait()
	// A SIGKILLed owner holds its lock until it is gone: a stop before
	// that would queue for it.
	waitFor(t, 10*time.Second, "the killed owner to be gone", func() bool { return !w.ownerAlive(id) })
	w.mustRun("stop", id)
	if _, st := containerOf(t, id); st == "running" {
		t.Fatalf("the container still runs its turn after kandev stop")
	}
	if s := w.session(id); s.StopReason != eventlog.StopUserCanceled || s.CurrentTurn != "" {
		t.Fatalf("after stop: stop_reason %q, current turn %q", s.StopReason, s.CurrentTurn)
	}
	r := w.mustRun("prompt", id, "--linger", "0", "hello again")
	if !strings.Contains(r.stdout, "hello again") {
		t.Fatalf("the prompt after the stop: %s", r)
	}
}

func TestContainer_TheAgentsRuntimeInTheConfigChoosesAndTheFlagWins(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	w.config("[agents.demo]\nruntime = \"container\"\n")
	id, r := w.start("--linger", "0", "hello")
	if r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	removeContainerAtEnd(t, id)
	if ctr, _ := containerOf(t, id); ctr == "" || w.session(id).Runtime != "container" {
		t.Fatalf("[agents.demo] runtime = \"container\" ran no container")
	}
	local, r := w.start("--runtime", "process", "--linger", "0", "hello")
	if r.code != 0 {
		t.Fatalf("start --runtime process: %s", r)
	}
	if ctr, _ := containerOf(t, local); ctr != "" || w.session(local).Runtime != "" {
		t.Fatalf("--runtime process still ran a container")
	}
}

func TestContainer_AStoppedEngineExits6WithOneLineSayingToStartIt(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("SKIP: no docker CLI to stand for an engine whose daemon is stopped")
	}
	w := newWorld(t)
	// A socket no daemon listens on: docker's daemon stopped, as its CLI sees it.
	w.env = append(w.env, "DOCKER_HOST=unix://"+filepath.Join(t.TempDir(), "docker.sock"))
	w.config("[runtime]\nengine = \"docker\"\n")
	_, r := w.start("--runtime", "container", "hello")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 6 || len(lines) != 1 || !strings.Contains(lines[0], "container engine docker") || !strings.Contains(lines[0], "start the engine") {
		t.Fatalf("want exit 6 and one line saying to start docker: %s", r)
	}
}

func TestContainer_AWarmPromptReachesTheSameAgentInTheSameContainer(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, e engineRow) {
		w := newWorld(t)
		w.config(e.toml)
		id, r := w.start("--runtime", "container", "--linger", "60", "remember PEAR")
		if r.code != 0 {
			t.Fatalf("start: %s", r)
		}
		e.removeAtEnd(t, id)
		pid, started := w.relayAgent(id)
		ctr, _ := e.containerOf(t, id)
		since := e.startedAt(ctr)
		if !w.ownerAlive(id) {
			t.Fatalf("no warm owner after start --linger 60")
		}

		began := time.Now()
		r = w.mustRun("prompt", id, "--linger", "60", "recall")
		t.Logf("warm prompt in a %s container: %s", e.cli, time.Since(began).Round(time.Millisecond))
		if !strings.Contains(r.stdout, "PEAR") {
			t.Fatalf("the warm prompt forgot PEAR: %s", r)
		}
		if p, s := w.relayAgent(id); p != pid || s != started {
			t.Fatalf("the agent is pid %d started %s, want the same process (pid %d started %s)", p, s, pid, started)
		}
		c2, st := e.containerOf(t, id)
		if c2 != ctr || st != "running" || e.startedAt(c2) != since {
			t.Fatalf("container %s %s started %s, want %s still running since %s", c2, st, e.startedAt(c2), ctr, since)
		}
		if as := ofType(w.events(id), eventlog.EventAgentStarted); len(as) != 1 {
			t.Fatalf("%d agent_started events, want 1 (a warm prompt restores nothing): %+v", len(as), as)
		}
	})
}

func TestContainer_AnOwnerThePoolClosesStopsItsContainer(t *testing.T) {
	t.Parallel()
	requirePodman(t)
	w := newWorld(t)
	w.config("[session]\nmax_warm = 1\n")
	old := startInContainer(t, w, "--linger", "60", "hello")
	if _, st := containerOf(t, old); st != "running" {
		t.Fatalf("the first warm owner's container is %q, want running", st)
	}
	young := startInContainer(t, w, "--linger", "60", "hello")
	waitFor(t, 15*time.Second, "the oldest warm owner to be closed by the pool", func() bool { return !w.ownerAlive(old) })
	waitFor(t, 15*time.Second, "the closed owner's container to stop", func() bool {
		_, st := containerOf(t, old)
		return st != "running"
	})
	if _, st := containerOf(t, young); st != "running" || !w.ownerAlive(young) {
		t.Fatalf("the new warm owner's container is %q (owner alive %v), want running", st, w.ownerAlive(young))
	}
}

// startInContainer starts a session whose agent runs in a container (args
// after --runtime container) and removes that container when the test ends.
func startInContainer(t *testing.T, w *world, args ...string) string {
	t.Helper()
	id, r := w.start(append([]string{"--runtime", "container"}, args...)...)
	if r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	removeContainerAtEnd(t, id)
	return id
}

// waitForAgentInTurn waits until the agent has answered in turn (its
// "/say started"): the prompt reached it. prompt_sent alone is written
// before the prompt goes to the agent, so a kill right after it may leave a
// turn the agent never got, which is repaired and continued, rightly.
func waitForAgentInTurn(t *testing.T, w *world, id, turn string) {
	t.Helper()
	waitFor(t, time.Minute, "the agent's first words in turn "+turn, func() bool {
		return strings.Contains(agentText(w.eventsSoFar(id), turn), "started")
	})
}
