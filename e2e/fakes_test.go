package e2e_test

// What the real-agent suites share about their fake model server
// (testdata/fakemodel) and about waiting for an agent's processes to end.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// builtTestdata are the testdata programs built by this test binary, by name.
var builtTestdata sync.Map // name -> func() (string, string): the binary, or why it did not build

// buildTestdata builds testdata/name once per test binary (go test ./...
// skips testdata) and returns the binary.
func buildTestdata(t *testing.T, name string) string {
	t.Helper()
	once, _ := builtTestdata.LoadOrStore(name, sync.OnceValues(func() (string, string) {
		bin := filepath.Join(filepath.Dir(kandevBin), name)
		if out, err := exec.Command("go", "build", "-o", bin, "../testdata/"+name).CombinedOutput(); err != nil {
			return "", fmt.Sprintf("building testdata/%s: %v\n%s", name, err, out)
		}
		return bin, ""
	}))
	bin, problem := once.(func() (string, string))()
	if bin == "" {
		t.Fatal(problem)
	}
	return bin
}

// startFakeModel starts testdata/fakemodel speaking format (messages,
// responses, chat or gemini) with args, stopped with the test (and by itself
// when idle), and returns its base URL and the path of its request log.
func startFakeModel(t *testing.T, format string, args ...string) (url, reqLog string) {
	t.Helper()
	reqLog = filepath.Join(t.TempDir(), "requests.jsonl")
	srv := exec.Command(buildTestdata(t, "fakemodel"), append([]string{"-format", format, "-log", reqLog, "-idle", "5m"}, args...)...)
	stdout, _ := srv.StdoutPipe()
	var srvErr bytes.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("fake %s server printed %q (%v): %s", format, url, err, srvErr.String())
	}
	return strings.TrimSpace(url), reqLog
}

// readRequestLog reads the fake model server's request log (one JSON object
// a line, see internal/fakemodel) and keeps the requests keep accepts
// (nil: all).
func readRequestLog[T any](t *testing.T, path string, keep func(T) bool) []T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []T
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var q T
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatalf("fake server log %s: %v: %s", path, err, line)
		}
		if keep == nil || keep(q) {
			out = append(out, q)
		}
	}
	return out
}

// waitGone waits up to 10 s for live to find none of what's processes,
// and fails naming those left after after.
func waitGone[T any](t *testing.T, what, after string, live func() []T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := live()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still running 10 s after %s: %+v", what, after, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
