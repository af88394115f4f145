//go:build unix

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// twoTemplate is the project every two-machine trial starts from, made
// once per matrix run: a bare repository (the remote) and a clone of it.
// A trial copies both instead of running git init, commit, push and two
// clones of its own: on a loaded CI machine those processes were a good
// part of a trial's time, and they are not what is tested.
type twoTemplate struct {
	bare, clone string
	err         error
}

var (
	twoTmplOnce sync.Once
	twoTmpl     twoTemplate
)

// gitEnv is the environment of the harness's own git commands.
func gitEnv() []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null")
}

func runGit(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %v: %v %s", args, err, out)
	}
	return nil
}

// templateFor makes the template under dir (once).
func templateFor(dir string) twoTemplate {
	twoTmplOnce.Do(func() {
		root := filepath.Join(dir, "two-template")
		t := twoTemplate{bare: filepath.Join(root, "project.git"), clone: filepath.Join(root, "clone")}
		seed := filepath.Join(root, "seed")
		os.MkdirAll(seed, 0o755)
		os.WriteFile(filepath.Join(seed, "notes.txt"), []byte("notes\n"), 0o644)
		steps := [][]string{
			{root, "init", "-q", "--bare", "-b", "main", t.bare},
			// A remote that collects garbage after each push spends a
			// trial's time in git gc, which is no part of what is tested.
			{t.bare, "config", "receive.autogc", "false"},
			{t.bare, "config", "gc.auto", "0"},
			{seed, "init", "-q", "-b", "main"},
			{seed, "add", "notes.txt"},
			{seed, "commit", "-q", "-m", "init"},
			{seed, "push", "-q", t.bare, "main"},
			{root, "clone", "-q", "-b", "main", t.bare, t.clone},
			{t.clone, "config", "gc.auto", "0"},
			{t.clone, "config", "maintenance.auto", "false"},
		}
		for _, st := range steps {
			if t.err = runGit(st[0], st[1:]...); t.err != nil {
				break
			}
		}
		twoTmpl = t
	})
	return twoTmpl
}

// copyTree copies the directory from to to (which must not exist).
func copyTree(from, to string) error {
	return os.CopyFS(to, os.DirFS(from))
}

// setup makes the trial's remote and both machines (a home each, with its
// own claim_ttl_seconds, and a clone each), starts the session on A and
// brings it to B.
func (t *twoTrial) setup() bool {
	tmpl := templateFor(t.o.dir)
	if tmpl.err != nil {
		t.r.failf("setup: the template project: %v", tmpl.err)
		return false
	}
	served := filepath.Join(t.dir, "served")
	t.bare = filepath.Join(served, "project.git")
	if err := copyTree(tmpl.bare, t.bare); err != nil {
		t.r.failf("setup: copying the remote: %v", err)
		return false
	}
	t.url = t.bare
	fmt.Fprintf(&t.timings, "%6.2fs remote copied\n", time.Since(t.began).Seconds())
	if t.tp.daemon && !t.startDaemon(served) {
		return false
	}
	fmt.Fprintf(&t.timings, "%6.2fs remote served\n", time.Since(t.began).Seconds())
	for i, name := range machineNames {
		m := &machine{name: name, home: filepath.Join(t.dir, "home"+name), clone: filepath.Join(t.dir, "clone"+name)}
		if err := t.copyClone(tmpl, m.clone); err != nil {
			t.r.failf("setup: the clone of %s: %v", name, err)
			return false
		}
		os.MkdirAll(m.home, 0o700)
		cfg := t.p.configTOML(t.o.kandev) + fmt.Sprintf("\n[sync]\nclaim_ttl_seconds = %d\ntimeout_seconds = 2\n", t.tp.ttl[i])
		os.WriteFile(filepath.Join(m.home, "config.toml"), []byte(cfg), 0o600)
		for _, kv := range t.env {
			if !strings.HasPrefix(kv, "KANDEV_HOME=") {
				m.env = append(m.env, kv)
			}
		}
		m.env = append(m.env, "KANDEV_HOME="+m.home, "KANDEV_MACHINE="+name, "GIT_CONFIG_GLOBAL=/dev/null")
		t.ms[i] = m
	}
	fmt.Fprintf(&t.timings, "%6.2fs clones copied\n", time.Since(t.began).Seconds())
	c := t.on(0, "start", "/say a session that travels")
	t.id = strings.TrimSpace(strings.SplitN(c.stdout, "\n", 2)[0])
	t.r.sessionID = t.id
	if c.code != 0 || t.id == "" {
		t.r.failf("setup: start on A: %s", c.brief())
		return false
	}
	return t.setupSync(0, "push") && t.setupSync(1, "pull")
}

// copyClone copies the template's clone to dir, its origin now the
// trial's remote (a path or a git:// URL).
func (t *twoTrial) copyClone(tmpl twoTemplate, dir string) error {
	if err := copyTree(tmpl.clone, dir); err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, ".git", "config")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	was := "url = " + tmpl.bare + "\n"
	if !strings.Contains(string(cfg), was) {
		return fmt.Errorf("the template clone's config names no origin %s", tmpl.bare)
	}
	return os.WriteFile(cfgPath, []byte(strings.Replace(string(cfg), was, "url = "+t.url+"\n", 1)), 0o644)
}

// setupSync pushes or pulls the new session, again while the remote is
// too slow to answer (a loaded machine): the setup is not under test.
func (t *twoTrial) setupSync(m int, op string) bool {
	for try := 0; ; try++ {
		c := t.on(m, op, t.id)
		if c.code == 0 {
			return true
		}
		if try == 4 || !strings.Contains(c.stderr, "did not answer") {
			t.r.failf("setup: %s on %s: %s", op, machineNames[m], c.brief())
			return false
		}
	}
}

// startDaemon serves dir over git:// (pushes allowed) on a free port.
func (t *twoTrial) startDaemon(dir string) bool {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.r.failf("setup: listen: %v", err)
		return false
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.r.failf("setup: git --exec-path: %v", err)
		return false
	}
	t.daemon = exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", "--port="+strconv.Itoa(port), "--base-path="+dir, dir)
	if err := t.daemon.Start(); err != nil {
		t.r.failf("setup: git daemon: %v", err)
		t.daemon = nil
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.r.failf("setup: git daemon did not listen")
			return false
		}
	}
	t.url = "git://127.0.0.1:" + strconv.Itoa(port) + "/project.git"
	return true
}

func (t *twoTrial) stopDaemon() {
	if t.daemon != nil {
		t.daemon.Process.Signal(syscall.SIGCONT)
		t.daemon.Process.Kill()
		t.daemon.Wait()
	}
}
