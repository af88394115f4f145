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
