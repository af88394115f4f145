package demoagent

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// The demo agent runs inside kandev: serving a client must not replace the
// process's logger, which every other package logs through.
func TestRun_LeavesTheProcessLoggerAlone(t *testing.T) {
	before := slog.Default()
	if err := Run(context.Background(), Options{Dir: t.TempDir()}, strings.NewReader(""), io.Discard); err != nil {
		t.Fatal(err)
	}
	if slog.Default() != before {
		t.Error("Run replaced slog.Default")
	}
}
