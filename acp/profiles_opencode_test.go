package acp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kandev/kandev/config"
)

// OpenCode 1.18 serves ACP as `opencode acp`, restores sessions natively
// (session/resume) and needs no history injection or resume flag.
func TestProfiles_OpenCodeRunsOpenCodeACPAndResumesNatively(t *testing.T) {
	p, err := LookupProfile(&config.Config{}, "opencode")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Command, []string{"opencode", "acp"}) || !p.BuiltIn {
		t.Errorf("opencode command %q (built in %v), want [opencode acp]", p.Command, p.BuiltIn)
	}
	if !strings.Contains(p.InstallHint, "npm install -g opencode-ai") {
		t.Errorf("opencode install hint %q does not say npm install -g opencode-ai", p.InstallHint)
	}
	if !p.NativeResume || p.HistoryInjection || len(p.ResumeFlag) != 0 {
		t.Errorf("opencode restore settings: native resume %v, history injection %v, resume flag %q", p.NativeResume, p.HistoryInjection, p.ResumeFlag)
	}
}
