package commands

import (
	"bytes"
	"strings"
	"testing"
)

func TestOverview_KandevWithoutArgumentsShowsTheCommonFlows(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run(nil, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, flow := range []string{"kandev start ", "kandev prompt ", "kandev resume ", "kandev recap ", "kandev list", "kandev status ", "kandev demo"} {
		if !strings.Contains(out.String(), flow) {
			t.Errorf("overview lacks %q:\n%s", flow, out.String())
		}
	}
	if n := strings.Count(out.String(), "\n"); n > 30 {
		t.Errorf("the overview should fit a screen, has %d lines", n)
	}
}

func TestHelp_EveryCommandShowsAnExample(t *testing.T) {
	for _, cmd := range grammar(t).Leaves(true) {
		path := strings.Fields(cmd.Path())
		var out, errb bytes.Buffer
		if code := Run(append(path, "--help"), strings.NewReader(""), &out, &errb); code != 0 {
			t.Errorf("kandev %s --help: exit %d", cmd.Path(), code)
			continue
		}
		help := out.String()
		i := strings.Index(help, "Example")
		if i < 0 || !strings.Contains(help[i:], "kandev") {
			t.Errorf("kandev %s --help has no example:\n%s", cmd.Path(), help)
		}
	}
}

func TestHelp_LeadsWithTheGroupedFlowsAndPutsGlobalFlagsAfterACommandsOwn(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	help := out.String()
	flows, flags := strings.Index(help, "Everyday flows:"), strings.Index(help, "Global flags:")
	if flows < 0 || flags < flows || strings.Contains(help, "\nCommands:") {
		t.Errorf("kandev --help does not lead with grouped flows before the flags:\n%s", help)
	}
	if n := strings.Count(help, "\n"); n > 80 {
		t.Errorf("kandev --help has %d lines, want at most 80", n)
	}
	for _, cmd := range grammar(t).Leaves(true) {
		if !strings.Contains(help, "\n  "+cmd.Name+" ") {
			t.Errorf("kandev --help does not list %s", cmd.Name)
		}
	}
	out.Reset()
	if code := Run([]string{"start", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	help = out.String()
	own, global := strings.Index(help, "--agent="), strings.Index(help, "--home=")
	if own < 0 || global < own || !strings.Contains(help[own:global], "Global flags:") {
		t.Errorf("kandev start --help lists the global flags before its own:\n%s", help)
	}
}
