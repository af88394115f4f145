//go:build linux

package e2e_test

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
)

// The docker rows of the container tests run the demo agent in an image
// made here, FROM scratch: only the C library the kandev binary links
// against (nothing when it is static), since kandev mounts itself into the
// container. .ci/docker-setup installs and starts dockerd; without a daemon
// that answers, the rows skip.

const dockerImage = "kandev-e2e-base"

var dockerOnce struct {
	sync.Once
	why string // "" when docker runs containers of dockerImage here
}

// requireDocker skips, visibly, unless a docker daemon answers and holds
// dockerImage.
func requireDocker(t *testing.T) {
	t.Helper()
	dockerOnce.Do(func() {
		if _, err := exec.LookPath("docker"); err != nil {
			dockerOnce.why = "docker is not installed (.ci/docker-setup installs and starts it)"
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
			line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
			dockerOnce.why = "no docker daemon answers (.ci/docker-setup starts one): " + line
			return
		}
		if err := importBaseImage(ctx); err != nil {
			dockerOnce.why = "cannot make the image " + dockerImage + ": " + err.Error()
		}
	})
	if dockerOnce.why != "" {
		t.Skip("SKIP: " + dockerOnce.why)
	}
}

// importBaseImage makes dockerImage from a tarball of the shared libraries
// the test's kandev binary needs (ldd's list) and an empty /tmp.
func importBaseImage(ctx context.Context) error {
	var libs []string
	out, _ := exec.Command("ldd", kandevBin).Output() // a static binary: an error, no libraries
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "/") {
			libs = append(libs, f)
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	mkdir := func(d string, mode int64) error {
		if d == "." || d == "/" || dirs[d] {
			return nil
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: mode})
	}
	if err := mkdir("/tmp", 0o1777); err != nil {
		return err
	}
	for _, lib := range libs {
		b, err := os.ReadFile(lib) // through its links: the file itself
		if err != nil {
			return err
		}
		var parents []string
		for d := path.Dir(lib); d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if err := mkdir(d, 0o755); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(lib, "/"), Mode: 0o755, Size: int64(len(b))}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "docker", "import", "-", dockerImage)
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		return &importError{strings.TrimSpace(string(out))}
	}
	return nil
}

type importError struct{ msg string }

func (e *importError) Error() string { return "docker import: " + e.msg }

func TestContainer_DockerWithoutAnImageExits6SayingToSetOne(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	w := newWorld(t)
	w.config("[runtime]\nengine = \"docker\"\n")
	_, r := w.start("--runtime", "container", "hello")
	if r.code != 6 {
		t.Fatalf("want exit 6 when docker is given no image: %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "--rootfs") || !strings.Contains(lines[0], "[runtime] image") {
		t.Fatalf("want one line saying docker has no --rootfs and to set [runtime] image, got:\n%s", r.stderr)
	}
}
