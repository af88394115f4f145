// Package version names the kandev that is running: its version, the commit
// it was built from, and when that commit was made (or, for a release, when
// it was built). A release build sets them with linker flags
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
	// Built: Date is when the binary was built (the release build sets it),
	// not when its commit was made.
	Built bool
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
	in := Info{Version: ldVersion, Commit: ldCommit, Date: ldDate, Built: ldDate != ""}
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
	if rev, at, ok := pseudo(in.Version); ok {
		// go install module@branch or @commit: the module proxy's
		// pseudo-version names the commit and its time.
		if in.Commit == "" {
			in.Commit = rev
		}
		if in.Date == "" {
			in.Date = at
		}
	}
	in.Version = strings.TrimPrefix(in.Version, "v")
	if in.Version == "" {
		in.Version = "devel"
	}
	return in
}

// pseudo reads the commit and its time (RFC 3339) out of a Go
// pseudo-version: v0.0.0-20261130091500-abc123456789, or the forms with a
// pre-release or patch base (v1.2.4-0.20261130091500-abc123456789).
func pseudo(v string) (rev, at string, ok bool) {
	v, _ = strings.CutSuffix(v, "+incompatible")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 || !all(v[i+1:], "0123456789abcdef") {
		return "", "", false
	}
	rev, v = v[i+1:], v[:i]
	ts := v[max(strings.LastIndexAny(v, "-."), 0)+1:]
	if len(ts) != 14 || !all(ts, "0123456789") {
		return "", "", false
	}
	at = ts[0:4] + "-" + ts[4:6] + "-" + ts[6:8] + "T" + ts[8:10] + ":" + ts[10:12] + ":" + ts[12:14] + "Z"
	return rev, at, true
}

func all(s, chars string) bool {
	for _, r := range s {
		if !strings.ContainsRune(chars, r) {
			return false
		}
	}
	return true
}

// String is the one line `kandev --version` prints: "kandev 0.2.0 (commit
// 0123abc…, built 2026-12-01T10:00:00Z)" for a release; a build of a checkout
// or of a module knows only its commit's time, and says "committed".
func (i Info) String() string {
	c := i.Commit
	if c == "" {
		c = "unknown"
	}
	if i.Modified {
		c += ", modified"
	}
	switch {
	case i.Date == "":
	case i.Built:
		c += ", built " + i.Date
	default:
		c += ", committed " + i.Date
	}
	return "kandev " + i.Version + " (commit " + c + ")"
}
