package version

import (
	"runtime/debug"
	"testing"
)

func TestVersion_NamesTheVersionCommitAndDateOfEveryKindOfBuild(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	checkout := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: vcs("vcs.revision", "abc123", "vcs.time", "2026-11-30T09:15:00Z", "vcs.modified", "true")}
	cases := []struct {
		name          string
		ldV, ldC, ldD string
		bi            *debug.BuildInfo
		want          string
	}{
		{"release build: the linker flags win", "0.2.0", "fedcba9", "2026-12-01T10:00:00Z", checkout,
			"kandev 0.2.0 (commit fedcba9, built 2026-12-01T10:00:00Z)"},
		{"go install module@version: the module version, no VCS data", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}},
			"kandev 0.3.1 (commit unknown)"},
		{"build of a checkout: devel, the commit, its time (not the build's), uncommitted changes", "", "", "", checkout,
			"kandev devel (commit abc123, modified, committed 2026-11-30T09:15:00Z)"},
		{"checkout stamped with a pseudo-version", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130091500-abc123456789"}, Settings: vcs("vcs.revision", "abc123456789", "vcs.modified", "false")},
			"kandev 0.0.0-20261130091500-abc123456789 (commit abc123456789, committed 2026-11-30T09:15:00Z)"},
		{"go install module@main: the pseudo-version names the commit and its time", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261201155446-87fbf3001234"}},
			"kandev 0.1.1-0.20261201155446-87fbf3001234 (commit 87fbf3001234, committed 2026-12-01T15:54:46Z)"},
		{"a pre-release pseudo-version", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.2.0-rc.1.0.20261201155446-87fbf3001234+incompatible"}},
			"kandev 0.2.0-rc.1.0.20261201155446-87fbf3001234+incompatible (commit 87fbf3001234, committed 2026-12-01T15:54:46Z)"},
		{"a tag that only looks like one is not read", "", "", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v1.0.0-beta-abc123456789"}},
			"kandev 1.0.0-beta-abc123456789 (commit unknown)"},
		{"no build info at all", "", "", "", nil, "kandev devel (commit unknown)"},
	}
	for _, c := range cases {
		if got := resolve(c.ldV, c.ldC, c.ldD, c.bi).String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
