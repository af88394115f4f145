package commands

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/config"
)

// A step's kandev resume relaunches the agent, which kandev itself gives
// [agent] handshake_timeout_seconds to answer, and then runs the
// continuation turn: the demo must not stop it sooner, or a slow start is
// reported as a bare "signal: killed" (exit status 1 on Windows) instead
// of kandev's own error, or instead of passing.
func TestDemo_StepBoundOutlastsTheAgentHandshakeAndATurn(t *testing.T) {
	handshake := time.Duration(new(config.Config).HandshakeTimeoutSeconds()) * time.Second
	const turn = 60 * time.Second // the demo's longest turn takes about 5 s
	if demoStepBound < handshake+turn {
		t.Fatalf("a demo step may run %s, less than kandev's own handshake timeout (%s) plus a turn (%s)", demoStepBound, handshake, turn)
	}
}

// A step that outlives its bound is stopped, and the demo says so: which
// command, after how long, not only how the process ended.
func TestDemo_AStepOverItsBoundSaysItTimedOut(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command on this system")
	}
	var out bytes.Buffer
	env := &Env{Ctx: context.Background(), Out: &Output{Out: &out, Err: &out}}
	d := &demoRun{env: env, exe: sleep, cwd: t.TempDir(), home: t.TempDir(), step: 3, bound: 200 * time.Millisecond}
	start := time.Now()
	_, err = d.kandev(true, "30")
	if err == nil {
		t.Fatal("a step that runs past its bound succeeded")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the step was not stopped at its bound: it ran %s", time.Since(start))
	}
	for _, want := range []string{"demo step 3", "kandev 30", "did not finish within 200ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
}
