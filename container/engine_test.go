package container

import (
	"errors"
	"strings"
	"testing"
)

func TestEngine_RefusalsNameTheEngineAndWhatToDo(t *testing.T) {
	e := &Engine{Name: "podman", Path: "/usr/bin/podman"}
	cases := []struct {
		name, stderr, advice string
	}{
		{"permission denied", "Error: permission denied while trying to connect", "run kandev as a user"},
		{"daemon stopped", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", "start the engine"},
		{"image missing", "Error: repo/agent:1: image not known", "build or pull the image"},
		{"docker's usage hint", "unknown shorthand flag: 'x' in -x\nSee 'docker run --help'.", "shorthand flag"},
		{"no rootfs", "unknown flag: --rootfs\n\nUsage:  docker run [OPTIONS] IMAGE [COMMAND] [ARG...]\n\nRun 'docker run --help' for more information", "set [runtime] image"},
		{"other", "Error: something else", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := e.refusal("run", c.stderr, errors.New("exit status 125"))
			if !errors.Is(err, ErrEngine) {
				t.Fatalf("%v is no ErrEngine", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "container engine podman: podman run: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, c.advice) {
				t.Fatalf("got %q, want one line naming podman run and %q", msg, c.advice)
			}
		})
	}
}

func TestEngine_ANamedEngineThatIsMissingSaysHowToFixIt(t *testing.T) {
	_, err := FindEngine("no-such-engine-here")
	if !errors.Is(err, ErrEngine) || !strings.Contains(err.Error(), "no-such-engine-here") || !strings.Contains(err.Error(), "[runtime] engine") {
		t.Fatalf("got %v", err)
	}
}
