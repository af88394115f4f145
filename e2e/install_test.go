package e2e_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The fresh-account install check: a new HOME whose PATH holds only the Go
// toolchain (and the system's basic directories), the README's first install
// line run as written, then kandev demo and kandev agents by their names from
// PATH. The module is served from this checkout by a module proxy the test
// writes as files (GOPROXY=file://...), followed by the machine's own proxy
// for the dependencies. A cold install compiles every dependency in a new
// build cache, a minute or more on two cores, so it runs only when asked:
// KANDEV_E2E_INSTALL=1 (.ci/run sets it).

const (
	installModule  = "github.com/kandev/kandev"
	installVersion = "v0.1.0"
)

func TestInstall_FreshAccountInstallsWithTheREADMELineAndRunsByName(t *testing.T) {
	t.Parallel()
	if os.Getenv("KANDEV_E2E_INSTALL") != "1" {
		t.Skip("SKIP: a cold go install compiles every dependency (a minute or more); set KANDEV_E2E_INSTALL=1 to run it (.ci/run does)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("SKIP: the install check drives a POSIX shell")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("SKIP: no go toolchain on PATH")
	}
	goBin, _ = filepath.EvalSymlinks(goBin)
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := firstInstallLine(t, string(readme))
	if want := "CGO_ENABLED=0 go install " + installModule + "@latest"; line != want {
		t.Fatalf("the README's first install line is %q, want %q", line, want)
	}

	realProxy := goEnv(t, "GOPROXY")
	proxy := writeModuleProxy(t)
	home := t.TempDir()
	// The module cache is read-only as go writes it: empty it before the
	// temporary directory is removed (cleanups run last registered first).
	t.Cleanup(func() {
		c := exec.Command(goBin, "clean", "-modcache")
		c.Env = freshEnv(home, filepath.Dir(goBin), "", "")
		c.Run()
	})
	// PATH: the Go toolchain's bin directory, plus /usr/bin:/bin for what a
	// fresh account has anyway (sh to run the README's line; go itself needs
	// nothing from them for a module-proxy download, and finds no C compiler
	// only if /usr/bin lacks one, which then builds with cgo off).
	basePath := filepath.Dir(goBin) + ":/usr/bin:/bin"
	env := freshEnv(home, basePath, "file://"+proxy+","+realProxy, installModule)

	start := time.Now()
	install := runIn(t, env, home, "sh", "-c", line)
	t.Logf("%s: %s (exit %d)", line, time.Since(start).Round(time.Second), install.code)
	if install.code != 0 {
		t.Fatalf("the README's install line failed on a fresh account:\n%s", install)
	}

	// As the README says: kandev lands in $(go env GOPATH)/bin, added to PATH.
	gopath := strings.TrimSpace(runIn(t, env, home, "go", "env", "GOPATH").stdout)
	if want := filepath.Join(home, "go"); gopath != want {
		t.Errorf("go env GOPATH = %q on a fresh account, want %q", gopath, want)
	}
	if _, err := os.Stat(filepath.Join(gopath, "bin", "kandev")); err != nil {
		t.Fatalf("go install left no kandev in $(go env GOPATH)/bin: %v", err)
	}
	// CGO_ENABLED=0 in the line: the binary is static, as released (no
	// dynamic loader at every start).
	if runtime.GOOS == "linux" {
		if interp := elfInterpreter(t, filepath.Join(gopath, "bin", "kandev")); interp != "" {
			t.Errorf("the installed kandev is dynamically linked (interpreter %s); the README's line should build it static", interp)
		}
	}
	// Before PATH has it, the name is not found: the README's second line is needed.
	if r := runIn(t, env, home, "sh", "-c", "command -v kandev"); r.code == 0 {
		t.Errorf("kandev is found before $(go env GOPATH)/bin is on PATH: %s", r.stdout)
	}
	env = setEnv(env, "PATH", basePath+":"+filepath.Join(gopath, "bin"))

	ver := runIn(t, env, home, "kandev", "--version")
	// The version comes from the build info go install wrote (a module zip
	// carries no VCS data, so commit and date may be unknown).
	if want := "kandev " + strings.TrimPrefix(installVersion, "v"); ver.code != 0 || !strings.HasPrefix(ver.stdout, want) {
		t.Errorf("kandev --version should start %q:\n%s", want, ver)
	}
	t.Logf("kandev --version: %s", strings.TrimSpace(ver.stdout))

	demo := runIn(t, env, home, "kandev", "demo")
	if demo.code != 0 {
		t.Fatalf("kandev demo failed on a fresh account:\n%s", demo)
	}
	// Every step the README's sample shows is printed, and the closing line.
	steps := regexp.MustCompile(`(?m)^\[\d/\d\] .*$`).FindAllString(string(readme), -1)
	if len(steps) == 0 {
		t.Fatal("the README shows no demo step")
	}
	for _, s := range append(steps, "Every step did what it said.") {
		if !strings.Contains(demo.stdout, s) {
			t.Errorf("kandev demo does not print the README's %q:\n%s", s, demo.stdout)
		}
	}

	agents := runIn(t, env, home, "kandev", "agents")
	if agents.code != 0 {
		t.Fatalf("kandev agents failed on a fresh account:\n%s", agents)
	}
	// The README: which agents are installed, and how to install the others.
	demoRow := regexp.MustCompile(`(?m)^demo\s+true\s+.*\bdefault\b`)
	if !demoRow.MatchString(agents.stdout) || !strings.Contains(agents.stdout, "install: npm install -g") {
		t.Errorf("kandev agents should list the demo agent installed and default, and how to install the others:\n%s", agents.stdout)
	}

	// Does the real proxy know the module path? Reported, not asserted: the
	// answer depends on the network the test runs on.
	probe := runIn(t, freshEnv(home, basePath, realProxy, ""), home, "go", "list", "-m", installModule+"@latest")
	t.Logf("GOPROXY=%s go list -m %s@latest: exit %d: %s", realProxy, installModule, probe.code, strings.TrimSpace(probe.stdout+probe.stderr))
}

// firstInstallLine is the first command of the README's "## Install" section,
// without its comment.
func firstInstallLine(t *testing.T, readme string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(readme))
	inSection, inBlock := false, false
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "## "):
			inSection = l == "## Install"
		case inSection && strings.HasPrefix(l, "```"):
			inBlock = !inBlock
		case inSection && inBlock && l != "":
			if i := strings.Index(l, "#"); i >= 0 {
				l = l[:i]
			}
			return strings.TrimSpace(l)
		}
	}
	t.Fatal("the README has no command in its ## Install section")
	return ""
}

// freshEnv is a new account's environment: nothing of ours but HOME and
// PATH, and for go the proxy to use, where not to check sums, and no GOFLAGS
// (this machine's -buildvcs=false would not be on a fresh account).
func freshEnv(home, pathDirs, goproxy, nosumdb string) []string {
	env := []string{"HOME=" + home, "PATH=" + pathDirs, "GOFLAGS=", "TMPDIR=" + os.TempDir(),
		// nothing the demo starts lingers after the test
		"CI=1"}
	if goproxy != "" {
		env = append(env, "GOPROXY="+goproxy)
	}
	if nosumdb != "" {
		env = append(env, "GONOSUMDB="+nosumdb)
	}
	// GOTOOLCHAIN as this machine has it (local here: no toolchain download).
	if tc := os.Getenv("GOTOOLCHAIN"); tc != "" {
		env = append(env, "GOTOOLCHAIN="+tc)
	}
	return env
}

func setEnv(env []string, key, value string) []string {
	out := []string{key + "=" + value}
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

// runIn runs name (looked up on env's PATH, as a shell would) in dir.
func runIn(t *testing.T, env []string, dir, name string, args ...string) result {
	t.Helper()
	bin := name
	if !strings.Contains(name, "/") {
		bin = lookPathIn(env, name)
		if bin == "" {
			return result{stderr: name + ": command not found on PATH", code: 127}
		}
	}
	c := exec.Command(bin, args...)
	c.Dir, c.Env = dir, env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return result{out.String(), errb.String(), code}
}

func lookPathIn(env []string, name string) string {
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			continue
		}
		for _, d := range filepath.SplitList(strings.TrimPrefix(kv, "PATH=")) {
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// writeModuleProxy writes a file:// module proxy that serves this checkout as
// installModule at installVersion: @v/list, .info, .mod and a module zip of
// the files git tracks (laid out as module@version/path), leaving out any
// directory that is a module of its own (its own go.mod).
func writeModuleProxy(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("SKIP: git ls-files in %s: %v (the install check serves the files git tracks)", root, err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	var nested []string // directories holding a go.mod of their own
	for _, f := range files {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			nested = append(nested, path.Dir(f)+"/")
		}
	}
	proxy := t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(installModule), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	prefix := installModule + "@" + installVersion + "/"
	n := 0
files:
	for _, f := range files {
		for _, d := range nested {
			if strings.HasPrefix(f, d) {
				continue files
			}
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symbolic link (a module zip holds neither)
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(prefix + f)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		n++
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, installVersion, time.Now().UTC().Format(time.RFC3339))
	for name, body := range map[string][]byte{
		"list":                   []byte(installVersion + "\n"),
		installVersion + ".info": []byte(info),
		installVersion + ".mod":  mod,
		installVersion + ".zip":  zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("module proxy %s: %s@%s, %d files (%d KB zipped), nested modules left out: %v", proxy, installModule, installVersion, n, zbuf.Len()/1024, nested)
	return proxy
}

// elfInterpreter is the dynamic loader an ELF binary names ("" for a static one).
func elfInterpreter(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				t.Fatalf("read the interpreter of %s: %v", path, err)
			}
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}
