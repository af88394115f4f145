package demoagent

import (
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func TestSetup_SetModeModelAndOptionSurviveLoadAndResume(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	p := start(t, Options{Dir: dir}, newClient(true))
	resp, err := p.NewSession(ctx(t), acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionId
	if resp.Modes == nil || resp.Modes.CurrentModeId != "ask" || len(resp.Modes.AvailableModes) != 2 ||
		optionValue(resp.ConfigOptions, "model") != "demo-small" || optionValue(resp.ConfigOptions, "effort") != "low" ||
		optionValue(resp.ConfigOptions, "fast") != "false" || len(resp.ConfigOptions) != 3 {
		t.Fatalf("session/new does not offer the demo setup: %+v", resp)
	}
	if _, us := p.prompt(t, id, "remember FIG\nrecall"); strings.Contains(agentText(us), "mode:") {
		t.Fatalf("recall at the defaults names the setup: %q", agentText(us))
	}
	if _, err := p.SetSessionMode(ctx(t), acp.SetSessionModeRequest{SessionId: id, ModeId: "code"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetSessionConfigOption(ctx(t), acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "model", Value: "demo-large"}}); err != nil {
		t.Fatal(err)
	}
	set, err := p.SetSessionConfigOption(ctx(t), acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "effort", Value: "high"}})
	if err != nil || optionValue(set.ConfigOptions, "effort") != "high" {
		t.Fatalf("set_config_option: %+v, %v", set, err)
	}
	if _, err := p.SetSessionConfigOption(ctx(t), acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{SessionId: id, ConfigId: "effort", Value: "max"}}); err == nil {
		t.Fatal("effort=max was accepted")
	}
	const want = "mode: code, model: demo-large, options: effort=high"
	if _, us := p.prompt(t, id, "recall"); agentText(us) != "You asked me to remember: FIG.\n"+want {
		t.Fatalf("recall = %q", agentText(us))
	}
	p.stop()

	for _, how := range []string{"load", "resume"} {
		p := start(t, Options{Dir: dir}, newClient(true))
		var modes *acp.SessionModeState
		var opts []acp.SessionConfigOption
		if how == "load" {
			r, err := p.LoadSession(ctx(t), acp.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acp.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			modes, opts = r.Modes, r.ConfigOptions
		} else {
			r, err := p.ResumeSession(ctx(t), acp.ResumeSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acp.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			modes, opts = r.Modes, r.ConfigOptions
		}
		if modes == nil || modes.CurrentModeId != "code" || optionValue(opts, "model") != "demo-large" {
			t.Fatalf("%s answers %+v %+v", how, modes, opts)
		}
		p.client.take()
		if _, us := p.prompt(t, id, "/setup"); agentText(us) != want {
			t.Fatalf("/setup after %s = %q", how, agentText(us))
		}
		p.stop()
	}
}

func TestSetup_ModeDirectiveReportsTheChange(t *testing.T) {
	p := start(t, Options{Dir: t.TempDir()}, newClient(true))
	id := p.newSession(t, t.TempDir())
	p.client.take()
	_, us := p.prompt(t, id, "/mode code")
	reported := false
	for _, u := range us {
		reported = reported || u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "code"
	}
	if !reported || !strings.Contains(agentText(us), "Switched to mode code.") {
		t.Fatalf("/mode code: %q, current_mode_update sent: %v", agentText(us), reported)
	}
	if _, us := p.prompt(t, id, "/tools"); agentText(us) != "I was given no MCP servers." {
		t.Fatalf("/tools without servers = %q", agentText(us))
	}
}

// optionValue is config option id's current value ("" when not offered).
func optionValue(opts []acp.SessionConfigOption, id string) string {
	for _, o := range opts {
		switch {
		case o.Select != nil && string(o.Select.Id) == id:
			return string(o.Select.CurrentValue)
		case o.Boolean != nil && string(o.Boolean.Id) == id:
			if o.Boolean.CurrentValue {
				return "true"
			}
			return "false"
		}
	}
	return ""
}
