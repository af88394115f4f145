package acp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kandev/kandev/config"
)

func TestProfiles_BuiltInsRunTodaysACPEntryPoints(t *testing.T) {
	want := []struct {
		name    string
		command []string
		install string // the npm package its install hint names
	}{
		{"amp", []string{"amp-acp"}, ""},
		{"auggie", []string{"auggie", "--acp"}, "@augmentcode/auggie"},
		{"claude", []string{"claude-agent-acp"}, "@agentclientprotocol/claude-agent-acp"},
		{"codex", []string{"codex-acp"}, "@agentclientprotocol/codex-acp"},
		{"copilot", []string{"copilot", "--acp"}, "@github/copilot"},
		{"demo", []string{"{kandev}", "demo-agent"}, ""},
		{"gemini", []string{"gemini", "--acp"}, "@google/gemini-cli"},
		{"opencode", []string{"opencode", "acp"}, "opencode-ai"},
	}
	got := Profiles(&config.Config{})
	if len(got) != len(want) {
		t.Fatalf("%d built-in profiles, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		p := got[i]
		if p.Name != w.name || !reflect.DeepEqual(p.Command, w.command) || !p.BuiltIn || !p.NativeResume {
			t.Errorf("profile %d = %s %q (built in %v, native resume %v), want %s %q", i, p.Name, p.Command, p.BuiltIn, p.NativeResume, w.name, w.command)
		}
		if w.install != "" && !strings.Contains(p.InstallHint, "npm install -g "+w.install) {
			t.Errorf("%s install hint %q does not say npm install -g %s", p.Name, p.InstallHint, w.install)
		}
	}
}

func TestProfiles_ConfigOverridesABuiltInCommandAndKeepsItsHint(t *testing.T) {
	cfg := &config.Config{Agents: map[string]config.AgentProfile{"claude": {Command: []string{"/opt/claude-agent-acp"}}}}
	p, err := LookupProfile(cfg, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Command, []string{"/opt/claude-agent-acp"}) || !strings.Contains(p.InstallHint, "claude-agent-acp") {
		t.Fatalf("overridden claude profile: %+v", p)
	}
}

func TestDefaultAgent_IsTheConfigsChoiceElseTheDemoAgent(t *testing.T) {
	for _, tc := range []struct {
		config, want string
		chosen       bool
	}{
		{"", DemoProfile, false},
		{"claude", "claude", true},
		{"demo", "demo", true},
	} {
		name, chosen := DefaultAgent(&config.Config{DefaultAgent: tc.config})
		if name != tc.want || chosen != tc.chosen {
			t.Errorf("default_agent %q: got %q chosen=%v, want %q chosen=%v", tc.config, name, chosen, tc.want, tc.chosen)
		}
	}
}

func TestDemoDefaultNotice_NamesTheInstalledRealAgentsAndHowToChoose(t *testing.T) {
	profiles := Profiles(&config.Config{})
	installed := func(names ...string) func(Profile) bool {
		return func(p Profile) bool {
			for _, n := range names {
				if p.Name == n {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		installed []string
		want      []string // fragments of the line; none means no line
	}{
		{nil, nil},
		{[]string{"demo"}, nil},
		{[]string{"demo", "codex"}, []string{"installed: codex;", "--agent codex", `default_agent = "codex"`}},
		{[]string{"demo", "codex", "claude"}, []string{"installed: claude, codex;", "--agent claude", `default_agent = "claude"`}},
	} {
		real := RealAgents(profiles, installed(tc.installed...))
		line := DemoDefaultNotice(real)
		if len(tc.want) == 0 {
			if line != "" {
				t.Errorf("installed %v: notice %q, want none", tc.installed, line)
			}
			continue
		}
		if strings.Contains(line, "\n") || !strings.HasPrefix(line, "using the demo agent") {
			t.Errorf("installed %v: notice %q is not one line about the demo agent", tc.installed, line)
		}
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("installed %v: notice %q lacks %q", tc.installed, line, w)
			}
		}
	}
}

func TestProfiles_ExitOnEOF(t *testing.T) {
	no := false
	yes := true
	cfg := &config.Config{Agents: map[string]config.AgentProfile{
		"demo": {ExitOnEOF: &no}, "codex": {ExitOnEOF: &yes}, "mine": {Command: []string{"mine"}},
	}}
	want := map[string]bool{"claude": false, "codex": true, "demo": false, "gemini": true, "mine": true}
	for _, p := range Profiles(cfg) {
		if w, ok := want[p.Name]; ok && p.ExitOnEOF != w {
			t.Errorf("%s: exit_on_eof = %v, want %v", p.Name, p.ExitOnEOF, w)
		}
	}
	if g := (Profile{ExitOnEOF: false}).StopGrace(); g != 0 {
		t.Errorf("an agent that ignores EOF waits %s before its signal, want none", g)
	}
	if g := (Profile{ExitOnEOF: true}).StopGrace(); g <= 0 {
		t.Errorf("an agent that exits on EOF gets no grace")
	}
}
