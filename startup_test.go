package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every package linked into kandev runs its initialisation in every
// command, --version included, whether the command uses it or not (see
// docs/testing.md, start-up). A name ending in "/..." stands for the package
// and every package below it.
//
// keptOut are never linked: each brings a large tree and package-level work
// that no feature needs in this binary. go-git's root package links OpenPGP
// and every transport (remote/ reads a clone's remotes with go-git's config
// package instead); transport/client registers the http and ssh clients
// (remote/ picks the file and git transports itself; ssh and http(s)
// remotes go through the git command). The official MCP SDK is a test
// dependency (the MCP servers of the tests): the demo agent's MCP client
// (acp/demoagent/mcpclient.go) runs on the ACP SDK's JSON-RPC connection,
// and the SDK's jsonschema, HTTP transports and OAuth stay out with it.
var keptOut = []string{
	"github.com/go-git/go-git/v5",
	"github.com/go-git/go-git/v5/plumbing/transport/client",
	"github.com/go-git/go-git/v5/plumbing/transport/http/...",
	"github.com/go-git/go-git/v5/plumbing/transport/ssh/...",
	"golang.org/x/crypto/ssh/...",
	"github.com/kevinburke/ssh_config",
	"github.com/modelcontextprotocol/go-sdk/...",
	"github.com/google/jsonschema-go/...",
	"net/http",
	"crypto/tls",
}

// linkedFor are the heavy packages kandev links because a feature needs
// them, with that feature. Each must still be linked (a stale entry fails):
// when a feature stops needing one, move it to keptOut.
var linkedFor = []struct{ pkg, feature string }{
	// Sessions over git remotes (remote/, issue 26: go-git for objects,
	// refs and transports). plumbing/object links OpenPGP for commit
	// signatures, and with it circl.
	{"github.com/go-git/go-git/v5/plumbing/object", "push/pull: session commits and trees"},
	{"github.com/ProtonMail/go-crypto/...", "push/pull: go-git's plumbing/object (commit signature checks)"},
	{"github.com/cloudflare/circl/...", "push/pull: go-git's plumbing/object, through ProtonMail/go-crypto"},
	{"github.com/go-git/go-git/v5/storage/filesystem/...", "push/pull: kandev's object store"},
	{"github.com/go-git/go-git/v5/plumbing/transport/file", "push/pull: file:// and local path remotes"},
	{"github.com/go-git/go-git/v5/plumbing/transport/git", "push/pull: git:// remotes"},
	{"encoding/gob", "push/pull: go-git's config parser (gcfg)"},
	// The board (board/, issue 48): the terminal UI libraries the Go
	// ecosystem uses; bubbletea builds its key tables in its init, and
	// bubbles' text input links a clipboard.
	{"github.com/charmbracelet/bubbletea", "kandev board"},
	{"github.com/atotto/clipboard", "kandev board: bubbles' text input (the filter and answer fields)"},
	// Reboots (autostart/, issue 46): the launchd plist and the Windows
	// task are XML documents.
	{"encoding/xml", "kandev autostart: the launchd plist and the Windows task"},
}

func under(dep, pattern string) bool {
	tree, isTree := strings.CutSuffix(pattern, "/...")
	return dep == tree || isTree && strings.HasPrefix(dep, tree+"/")
}

func TestStartup_HeavyPackagesAreNotLinkedIntoKandev(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, dep := range deps {
		for _, heavy := range keptOut {
			if under(dep, heavy) {
				t.Errorf("kandev links %s (kept out: its package initialisation runs in every command); see keptOut", dep)
			}
		}
	}
	for _, l := range linkedFor {
		found := false
		for _, dep := range deps {
			found = found || under(dep, l.pkg)
		}
		if !found {
			t.Errorf("%s (for %s) is no longer linked: move it from linkedFor to keptOut", l.pkg, l.feature)
		}
	}
}

// What the package initialisation of the whole binary allocates, as
// GODEBUG=inittrace=1 kandev --version reports it: a figure the machine's
// load does not move, unlike the time it takes. Before the init costs were
// cut (the merge of setup, sync, notify and schedule) it was 482,288 bytes in
// 165 packages; measured after: 274,904 bytes in 155 packages (encoding/gob
// varies by about 1 KB from run to run), of which the MCP SDK's jsonschema is
// 81,240, encoding/gob 27,248 and ProtonMail's openpgp/internal/ecc 20,432.
// With the agent's supervisor in internal/supervise (an init of its own that
// allocates nothing): 274,840 bytes in 156 packages. With the demo agent's
// MCP client on the ACP SDK's connection instead of the MCP SDK (no
// jsonschema, net/http, crypto/tls): 159,576 to 159,736 bytes in 126.
// With the board's terminal UI (bubbletea 95,488, clipboard 17,472) and
// autostart's encoding/xml (18,776): 319,216 to 320,480 bytes in 146.
const (
	initBudgetBytes    = 336 << 10 // measured 320,480
	initBudgetPackages = 152       // measured 146
	// A package not in initAllowance allocating more than this in its
	// initialisation is a new heavy package: make its work lazy
	// (sync.OnceValue) or keep it out, or list it with the feature that
	// needs it.
	initBudgetOnePackage = 16 << 10
)

// initAllowance are the packages over initBudgetOnePackage, each needed by
// a feature in linkedFor.
var initAllowance = map[string]int{
	"github.com/charmbracelet/bubbletea": 104 << 10, // 95,488: kandev board
	"github.com/atotto/clipboard":        20 << 10,  // 17,472: kandev board
	"encoding/xml":                       20 << 10,  // 18,776: kandev autostart
	"encoding/gob":                       32 << 10,  // 26,048 to 27,248: go-git's gcfg
	"github.com/ProtonMail/go-crypto/openpgp/internal/ecc": 24 << 10, // 20,432: go-git's plumbing/object
}

// buildStatic builds kandev as released (CGO_ENABLED=0) into a temporary folder.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kandev")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as released
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// initTrace is what GODEBUG=inittrace=1 reports: the bytes each package's
// initialisation allocated, in the order they ran.
type initTrace []struct {
	pkg   string
	bytes int
}

func readInitTrace(t *testing.T, out []byte) initTrace {
	t.Helper()
	var tr initTrace
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("unreadable inittrace line %q", line)
		}
		tr = append(tr, struct {
			pkg   string
			bytes int
		}{f[1], b})
	}
	return tr
}

func TestStartup_PackageInitialisationAllocatesWithinItsBudget(t *testing.T) {
	bin := buildStatic(t)
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kandev --version: %v\n%s", err, out)
	}
	total, packages := 0, 0
	for _, p := range readInitTrace(t, out) {
		packages++
		total += p.bytes
		budget, listed := initAllowance[p.pkg]
		if !listed {
			budget = initBudgetOnePackage
		}
		if p.bytes > budget {
			t.Errorf("package %s allocates %d bytes in its initialisation (budget %d): make that work lazy, or list it in initAllowance and linkedFor with the feature that needs it", p.pkg, p.bytes, budget)
		}
	}
	if packages == 0 {
		t.Fatalf("no inittrace lines in the output of kandev --version:\n%s", out)
	}
	if total > initBudgetBytes {
		t.Errorf("package initialisation allocates %d bytes in %d packages (budget %d)", total, packages, initBudgetBytes)
	}
	if packages > initBudgetPackages {
		t.Errorf("%d packages run an initialisation (budget %d): a new dependency tree is linked", packages, initBudgetPackages)
	}
}
