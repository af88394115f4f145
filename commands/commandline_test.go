package commands

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// wholeModelRun parses args against the whole CLI, as Run did before it
// built only the named command, and returns what kong printed and the exit.
func wholeModelRun(t *testing.T, args []string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	var cli CLI
	exitCode := -1
	p, err := kong.New(&cli, kong.Name("kandev"),
		kong.Description("Run ACP coding agents in durable, resumable sessions."),
		kong.Vars{"version": "v"}, kong.Writers(&out, &out),
		kong.Exit(func(code int) { exitCode = code; panic(exitSignal{}) }),
		kong.WithHyphenPrefixedParameters(true), helpLayout)
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := parse(p, args, &Output{Out: &out, Err: &out}, &exitCode)
	return out.String(), code
}

func TestCommandLine_FindsEveryCommandUnderTheNameKongGivesIt(t *testing.T) {
	var cli CLI
	p, err := kong.New(&cli, kong.Name("kandev"), kong.Vars{"version": "v"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Model.Children {
		f, ok := commandField(n.Name)
		whole := n.Name == "__complete" || n.Name == "__man"
		switch {
		case whole && ok:
			t.Errorf("%s reads the whole model but gets a one-command CLI", n.Name)
		case !whole && (!ok || f.Name == ""):
			t.Errorf("command %s has no field in CLI under that name", n.Name)
		}
	}
	if _, ok := commandField("no-such-command"); ok {
		t.Error("an unknown word found a command")
	}
}

func TestCommandLine_OneCommandModelPrintsWhatTheWholeModelPrints(t *testing.T) {
	var cli CLI
	p, err := kong.New(&cli, kong.Name("kandev"), kong.Vars{"version": "v"})
	if err != nil {
		t.Fatal(err)
	}
	cases := [][]string{{"--help"}, {"bogus"}, {"--json"}, {"list", "--version"}}
	for _, n := range p.Model.Children {
		cases = append(cases, []string{n.Name, "--help"}, []string{n.Name, "--no-such-flag"}, []string{"--json", n.Name, "--no-such-flag"})
	}
	cases = append(cases, []string{"list", "extra"}, []string{"prompt"}, []string{"status", "--latest", "--limit", "x"})
	for _, args := range cases {
		want, wantCode := wholeModelRun(t, args)
		var out bytes.Buffer
		root, _ := commandLine(args)
		exitCode := -1
		one, err := kong.New(root, kong.Name("kandev"),
			kong.Description("Run ACP coding agents in durable, resumable sessions."),
			kong.Vars{"version": "v"}, kong.Writers(&out, &out),
			kong.Exit(func(code int) { exitCode = code; panic(exitSignal{}) }),
			kong.WithHyphenPrefixedParameters(true), helpLayout)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		_, code, _ := parse(one, args, &Output{Out: &out, Err: &out}, &exitCode)
		if got := out.String(); got != want || code != wantCode {
			t.Errorf("kandev %s: one-command model printed (exit %d)\n%s\nwhole model (exit %d)\n%s", strings.Join(args, " "), code, got, wantCode, want)
		}
	}
}

func TestRun_VersionAloneAnswersAsKongsVersionFlagDoes(t *testing.T) {
	var kongOut bytes.Buffer
	if code := Run([]string{"list", "--version"}, strings.NewReader(""), &kongOut, &kongOut); code != ExitOK {
		t.Fatalf("list --version: exit %d, output %q", code, kongOut.String())
	}
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"--version"}, strings.NewReader(""), &stdout, &stderr); code != ExitOK || stdout.String() != kongOut.String() || stderr.Len() != 0 {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, stdout.String(), stderr.String(), kongOut.String())
	}
	if !strings.HasPrefix(stdout.String(), "kandev ") {
		t.Errorf("--version printed %q, want kandev VERSION ...", stdout.String())
	}
}
