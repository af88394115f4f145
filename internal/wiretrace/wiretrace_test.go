package wiretrace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrap_EachConnectionHasItsOwnPairOfFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(Env, dir)
	for i, msg := range []string{"first", "second"} {
		var sink bytes.Buffer
		r, w := Wrap("demo-agent", strings.NewReader(msg+" in\n"), &sink)
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(msg + " out\n")); err != nil {
			t.Fatal(err)
		}
		if sink.String() != msg+" out\n" {
			t.Fatalf("connection %d wrote %q", i, sink.String())
		}
	}
	outs, _ := filepath.Glob(filepath.Join(dir, "demo-agent-*.out"))
	if len(outs) != 2 {
		t.Fatalf("want two traces (one per connection, same pid), got %v", outs)
	}
	for _, o := range outs {
		out, _ := os.ReadFile(o)
		in, _ := os.ReadFile(strings.TrimSuffix(o, ".out") + ".in")
		if strings.Fields(string(out))[0] != strings.Fields(string(in))[0] {
			t.Fatalf("%s pairs %q with %q", o, out, in)
		}
	}
}

func TestWrap_UnsetChangesNothing(t *testing.T) {
	t.Setenv(Env, "")
	r0, w0 := strings.NewReader("x"), &bytes.Buffer{}
	r, w := Wrap("acp", r0, w0)
	if r != io.Reader(r0) || w != io.Writer(w0) {
		t.Fatal("an unset trace wrapped the streams")
	}
}
