package commands

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// runModel parses args against grammar as Run does and returns what kong
// printed, the exit code and the command selected.
func runModel(t *testing.T, args []string, grammar any, command []kong.Option) (string, int, string) {
	t.Helper()
	var out bytes.Buffer
	exitCode := -1
	p, err := kong.New(grammar, append(command, parserOptions(&out, &out, &exitCode)...)...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	kctx, code, _ := parse(p, args, &Output{Out: &out, Err: &out}, &exitCode)
	selected := ""
	if kctx != nil && kctx.Selected() != nil {
		selected = kctx.Selected().FullPath()
	}
	return out.String(), code, selected
}

func TestCommandModel_OneCommandParsesAndPrintsAsTheWholeCLIDoes(t *testing.T) {
	whole, err := kong.New(&CLI{}, kong.Name("kandev"), kong.Vars{"version": "v"})
	if err != nil {
		t.Fatal(err)
	}
	cases := [][]string{{"--help"}, {"bogus"}, {"--json"}, {"list", "--version"}}
	for _, n := range whole.Model.Children {
		cases = append(cases, []string{n.Name}, []string{n.Name, "--help"}, []string{n.Name, "--no-such-flag"},
			[]string{"--json", n.Name, "--no-such-flag"}, []string{"--home", "/x", n.Name, "--json", "--help"})
	}
	cases = append(cases, []string{"list", "extra"}, []string{"prompt"}, []string{"status", "--latest", "--limit", "x"},
		[]string{"list", "--limit", "-1"}, []string{"start", "--agent", "demo", "hello", "world"},
		[]string{"--bogus", "list"}, []string{"list", "--hom", "x"}, []string{"list", "--resumabl"}, []string{"lis"})
	for _, args := range cases {
		want, wantCode, wantCmd := runModel(t, args, &CLI{}, nil)
		cli := &CLI{}
		grammar, command := commandModel(cli, args)
		got, code, cmd := runModel(t, args, grammar, command)
		if got != want || code != wantCode || cmd != wantCmd {
			t.Errorf("kandev %s: one-command model selected %q, printed (exit %d)\n%s\nwhole CLI selected %q (exit %d)\n%s",
				strings.Join(args, " "), cmd, code, got, wantCmd, wantCode, want)
		}
	}
}

func TestCommandModel_GivesEveryCommandAloneButThoseThatReadTheWholeModel(t *testing.T) {
	whole, err := kong.New(&CLI{}, kong.Name("kandev"), kong.Vars{"version": "v"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range whole.Model.Children {
		cli := &CLI{}
		grammar, command := commandModel(cli, []string{"--json", n.Name})
		wantWhole := n.Name == "__complete" || n.Name == "__man" || n.Name == "__reference"
		if gotWhole := grammar == any(cli); gotWhole != wantWhole || (len(command) == 0) != wantWhole {
			t.Errorf("%s: whole CLI %v, want %v", n.Name, gotWhole, wantWhole)
		}
	}
	if cli := (&CLI{}); func() bool { g, _ := commandModel(cli, []string{"no-such-command"}); return g != any(cli) }() {
		t.Error("an unknown word did not get the whole CLI (for the list of commands)")
	}
}
