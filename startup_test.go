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
// command, --version included, whether the command uses it or not. These
// are kept out of the binary: each brings a large tree and package-level
// work (tables, regexps, registrations) that kandev's hot commands would
// pay on every run. A feature that needs one of them runs it in another
// process (as worktrees use the git command) or keeps it out of this
// module's binary. See docs/testing.md, start-up. A name ending in "/..."
// stands for the package and every package below it.
var heavyPackages = []string{
	"github.com/go-git/go-git/v5",                        // PlainOpen and friends link every transport
	"github.com/go-git/go-git/v5/plumbing/transport/...", // net/http, x/crypto/ssh
	"github.com/go-git/go-git/v5/storage/filesystem/...", // encoding/gob, gcfg, regexps
	"golang.org/x/crypto/ssh/...",
	"github.com/ProtonMail/go-crypto/...",
	"github.com/cloudflare/circl/...",
	"encoding/gob",
	"net/http/...",
}

func TestStartup_HeavyPackagesAreNotLinkedIntoKandev(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range heavyPackages {
			tree, isTree := strings.CutSuffix(heavy, "/...")
			if dep == tree || isTree && strings.HasPrefix(dep, tree+"/") {
				t.Errorf("kandev links %s (kept out: its package initialisation runs in every command); see the rule above heavyPackages", dep)
			}
		}
	}
}

// initBudgetBytes bounds what the package initialisation of the whole
// binary allocates, as GODEBUG=inittrace=1 reports it: a figure that does
// not depend on the machine's load, unlike the time it takes. With go-git's
// transports linked it was 233,760 bytes in 2,213 allocations; now it is
// about 84,000 in 460.
const (
	initBudgetBytes      = 128 << 10
	initBudgetOnePackage = 32 << 10
)

func TestStartup_PackageInitialisationAllocatesWithinItsBudget(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kandev")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kandev --version: %v\n%s", err, out)
	}
	total, packages := 0, 0
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
		packages++
		total += b
		if b > initBudgetOnePackage {
			t.Errorf("package %s allocates %d bytes in its initialisation (budget %d): make that work lazy", f[1], b, initBudgetOnePackage)
		}
	}
	if packages == 0 {
		t.Fatalf("no inittrace lines in the output of kandev --version:\n%s", out)
	}
	if total > initBudgetBytes {
		t.Errorf("package initialisation allocates %d bytes in %d packages (budget %d)", total, packages, initBudgetBytes)
	}
}
