//go:build unix

package e2e_test

import (
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// syncRig is two machines (two kandev homes, two clones) and the git
// server they share, reached over one transport.
type syncRig struct {
	t      *testing.T
	bare   string // the repository on the server, by path
	url    string // how the clones reach it
	gitEnv []string
	a, b   *world
	// daemon is the git daemon of the "daemon" transport (nil otherwise).
	daemon *exec.Cmd
}

// gitOut runs git with the rig's environment and returns its output.
func (r *syncRig) gitOut(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null"), r.gitEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func newSyncRig(t *testing.T, transport string) *syncRig {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: git is not installed")
	}
	root := t.TempDir()
	r := &syncRig{t: t, bare: filepath.Join(root, "project.git")}
	r.gitOut(root, "init", "-q", "--bare", "-b", "main", r.bare)
	r.gitOut(r.bare, "config", "http.receivepack", "true")
	switch transport {
	case "path":
		r.url = r.bare
	case "daemon":
		r.url, r.daemon = startGitDaemonCmd(t, root)
	case "http":
		r.url = startGitHTTP(t, root)
	case "ssh":
		r.url, r.gitEnv = startSSHD(t, root)
	default:
		t.Fatalf("unknown transport %s", transport)
	}
	seed := filepath.Join(root, "seed")
	r.gitOut(root, "clone", "-q", r.url, seed)
	os.WriteFile(filepath.Join(seed, "README"), []byte("project\n"), 0o644)
	r.gitOut(seed, "add", "README")
	r.gitOut(seed, "commit", "-q", "-m", "init")
	r.gitOut(seed, "push", "-q", "origin", "HEAD:main")
	r.a, r.b = r.machine("A", root), r.machine("B", root)
	return r
}

// machine is one computer: its own home, its own clone of the project.
func (r *syncRig) machine(name, root string) *world {
	w := newWorld(r.t)
	w.cwd = filepath.Join(root, "clone-"+name)
	r.gitOut(root, "clone", "-q", "-b", "main", r.url, w.cwd)
	w.env = append(append(w.env, "KANDEV_MACHINE="+name, "CI=1", "GIT_CONFIG_GLOBAL=/dev/null"), r.gitEnv...)
	return w
}

// config writes the same config.toml on both machines.
func (r *syncRig) config(toml string) {
	r.a.config(toml)
	r.b.config(toml)
}

// shared is a session both machines hold: A starts it ("remember apple"),
// pushes it, and B pulls it.
func (r *syncRig) shared() string {
	r.t.Helper()
	id := r.a.mustStart("remember apple")
	r.a.mustRun("push", id)
	r.b.mustRun("pull", id)
	return id
}

// remoteRefs lists the server's refs/kandev refs.
func (r *syncRig) remoteRefs() map[string]string {
	out := r.gitOut(r.bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/kandev")
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, h, ok := strings.Cut(line, " "); ok {
			refs[name] = h
		}
	}
	return refs
}

// untouched is what the user's clone looks like to git: status and branches.
func (r *syncRig) untouched(w *world) string {
	return r.gitOut(w.cwd, "status", "--porcelain") + "\n" + r.gitOut(w.cwd, "for-each-ref", "refs/heads", "refs/remotes") + r.gitOut(w.cwd, "rev-parse", "HEAD")
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("SKIP: cannot listen on localhost: ", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, port int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Skipf("SKIP: %s did not start listening: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startGitDaemonCmd serves root over git:// with pushes allowed, and gives
// the daemon's process (a test may stop it to freeze the remote).
func startGitDaemonCmd(t *testing.T, root string) (string, *exec.Cmd) {
	port := freePort(t)
	// git-daemon itself, not `git daemon`: git runs it as a child and a
	// kill of git would leave the daemon serving after the test.
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("SKIP: git --exec-path: ", err)
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", "--port="+strconv.Itoa(port), "--base-path="+root, root)
	if err := cmd.Start(); err != nil {
		t.Skip("SKIP: git daemon cannot start: ", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitListening(t, port, "git daemon")
	return "git://127.0.0.1:" + strconv.Itoa(port) + "/project.git", cmd
}

// urlToken is the secret in the http remote's URL.
const urlToken = "s3cr3t-url-token"

// holdsToken reports a file under dir that contains urlToken.
func holdsToken(dir string) string {
	found := ""
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), urlToken) {
				found = p
			}
		}
		return nil
	})
	return found
}

// startGitHTTP serves root through git http-backend behind net/http.
func startGitHTTP(t *testing.T, root string) string {
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("SKIP: git --exec-path: ", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("SKIP: git http-backend is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("SKIP: cannot listen: ", err)
	}
	h := &cgi.Handler{Path: backend, Root: "/git", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=test"}}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	// A token in the URL, as CI checkouts have: it must never be stored.
	return "http://kandev:" + urlToken + "@" + l.Addr().String() + "/git/project.git"
}
