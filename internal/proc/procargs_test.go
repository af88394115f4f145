package proc

import (
	"encoding/binary"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func procArgs(argc int32, body string) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, uint32(argc))
	return append(b, body...)
}

func TestParseProcArgs_SplitsArgumentsFromEnvironment(t *testing.T) {
	cases := []struct {
		name      string
		raw       []byte
		argv, env []string
	}{
		{"padded path, args with spaces, env",
			procArgs(3, "/bin/sh\x00\x00\x00\x00sh\x00-c\x00sleep 1000 & wait\x00KANDEV_SESSION_ID=abc\x00HOME=/h\x00\x00junk\x00"),
			[]string{"sh", "-c", "sleep 1000 & wait"}, []string{"KANDEV_SESSION_ID=abc", "HOME=/h"}},
		{"no environment", procArgs(1, "/bin/true\x00true\x00\x00"), []string{"true"}, nil},
		{"empty argument kept", procArgs(2, "/x\x00x\x00\x00E=1\x00"), []string{"x", ""}, []string{"E=1"}},
		{"truncated buffer", []byte{1, 0}, nil, nil},
		{"no terminator", procArgs(1, "/bin/true"), nil, nil},
	}
	for _, c := range cases {
		argv, env := parseProcArgs(c.raw)
		if !reflect.DeepEqual(argv, c.argv) || !reflect.DeepEqual(env, c.env) {
			t.Errorf("%s: argv %q env %q, want %q %q", c.name, argv, env, c.argv, c.env)
		}
	}
}

func TestTaggedProcesses_FindsAProcessOfThisHomeByItsSessionTagUntilItDies(t *testing.T) {
	skipOnWindows(t, "another process's environment is not readable there; the agent's Job Object ends its tree instead")
	id := "tagtest-" + strconv.Itoa(os.Getpid())
	home, other := t.TempDir(), t.TempDir()
	start := func(env ...string) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.Env = append(os.Environ(), append(env, SessionTagEnv+"="+id)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	ours := start("KANDEV_HOME=" + home)
	noHome := start()
	start("KANDEV_HOME=" + other) // the same id in another home is not ours
	found := TaggedProcesses(home)[id]
	if len(found) != 2 || found[0].PID != min(ours.Process.Pid, noHome.Process.Pid) || !strings.Contains(found[0].Command, "sleep 30") {
		t.Fatalf("tagged processes of %s: %+v, want pids %d and %d running sleep 30", id, found, ours.Process.Pid, noHome.Process.Pid)
	}
	ours.Process.Kill()
	ours.Wait()
	if found := TaggedProcesses(home)[id]; len(found) != 1 || found[0].PID != noHome.Process.Pid {
		t.Fatalf("after one died: %+v, want only %d", found, noHome.Process.Pid)
	}
}

func skipOnWindows(t *testing.T, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("not on Windows: " + why)
	}
}
