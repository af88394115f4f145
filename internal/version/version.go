// Package version names the kandev that is running: its version, the commit
// it was built from and when. A release build sets them with linker flags
// (-X, see .goreleaser.yaml); any other build reads what the Go toolchain
// stamped into the binary: the module version under `go install
// github.com/kandev/kandev@VERSION`, the commit and its time in a checkout.
package version

import (
	"runtime/debug"
	"strings"
)

// Set by the release build: -X github.com/kandev/kandev/internal/version.version=...
var (
	version string
	commit  string
	date    string
)

// Info is what `kandev --version` says.
type Info struct {
	Version string // "0.2.0"; "devel" for a build of a checkout
	Commit  string // "" when unknown (a module download has no VCS data)
	Date    string // RFC 3339: the release build's time, else the commit's; "" when unknown
	// Modified: built from a checkout with uncommitted changes.
	Modified bool
}

// Get is this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, date, bi)
}

// resolve prefers what the release build set and fills the rest from the
// build info (nil when the binary has none).
func resolve(ldVersion, ldCommit, ldDate string, bi *debug.BuildInfo) Info {
	in := Info{Version: ldVersion, Commit: ldCommit, Date: ldDate}
	if bi != nil {
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && in.Commit == "":
				in.Commit = s.Value
			case s.Key == "vcs.time" && in.Date == "":
				in.Date = s.Value
			case s.Key == "vcs.modified" && ldCommit == "":
				in.Modified = s.Value == "true"
			}
		}
	}
	in.Version = strings.TrimPrefix(in.Version, "v")
	if in.Version == "" {
		in.Version = "devel"
	}
	return in
}

// String is the one line `kandev --version` prints:
// "kandev 0.2.0 (commit 0123abc…, built 2026-12-01T10:00:00Z)".
func (i Info) String() string {
	c, d := i.Commit, i.Date
	if c == "" {
		c = "unknown"
	}
	if i.Modified {
		c += ", modified"
	}
	if d == "" {
		d = "unknown"
	}
	return "kandev " + i.Version + " (commit " + c + ", built " + d + ")"
}
