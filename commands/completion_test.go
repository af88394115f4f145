package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// grammar is kandev's real command line model.
func grammar(t *testing.T) *kong.Node {
	t.Helper()
	p, err := kong.New(&CLI{}, kong.Name("kandev"), kong.Vars{"version": "test"})
	if err != nil {
		t.Fatal(err)
	}
	return p.Model.Node
}

// homeWith creates sessions in a fresh home; later ones have newer activity.
func homeWith(t *testing.T, sessions ...state.Session) *state.Home {
	t.Helper()
	h, err := state.OpenHome(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	for i, s := range sessions {
		s.LastActivityAt = base.Add(time.Duration(i) * time.Minute)
		if err := h.CreateSession(&s); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func values(cands []candidate) string {
	var v []string
	for _, c := range cands {
		v = append(v, c.Value)
	}
	return strings.Join(v, " ")
}

func TestComplete_OffersWhatTheCursorPositionTakes(t *testing.T) {
	h := homeWith(t,
		state.Session{ID: "s-old", State: state.StateCompleted, Workspace: "api", Title: "old"},
		state.Session{ID: "s-mid", State: state.StateWaitingForInput, Workspace: "web"},
		state.Session{ID: "s-new", State: state.StateRunning, Workspace: "api"},
	)
	src := completionSource{home: h, config: &config.Config{Agents: map[string]config.AgentProfile{"mine": {Command: []string{"my-agent"}}}}}
	app := grammar(t)
	cases := []struct {
		words []string
		want  string
	}{
		{[]string{"st"}, "start status stop"},
		{[]string{"status", ""}, "s-new s-mid s-old"},                    // recent first
		{[]string{"resume", ""}, "s-new s-mid"},                          // finished sessions cannot be resumed
		{[]string{"--json", "status", "s-m"}, "s-mid"},                   // global flags before the command
		{[]string{"start", "--parent", ""}, "s-new s-mid s-old"},         // --parent takes an id
		{[]string{"start", "--agent", "m"}, "mine"},                      // agents from the config too
		{[]string{"start", "--agent=cl"}, "--agent=claude"},              // --flag=value form
		{[]string{"start", "--workspace", ""}, "api web"},                // known workspaces, recent first
		{[]string{"prune", "--state", ""}, "COMPLETED FAILED CANCELLED"}, // prune only takes terminal states
		{[]string{"--permissions", "approve-"}, "approve-reads approve-all"},
		{[]string{"completion", ""}, "bash zsh fish"},
		{[]string{"prune", "--d"}, "--dry-run"},
		{[]string{"prompt", "s-mid", ""}, ""},      // the prompt text: the shell offers files
		{[]string{"start", "--cwd", ""}, ""},       // a path: the shell offers files
		{[]string{"__compl"}, ""},                  // hidden commands stay hidden
		{[]string{"resume", "-i", "s-n"}, "s-new"}, // -i takes no value
		{[]string{"status", "--", "--weird"}, ""},  // after -- everything is an argument
		{[]string{"status", "s-new", ""}, ""},      // one id only
		{[]string{"list", "--state", "W"}, "WAITING_FOR_INPUT"},
	}
	for _, tc := range cases {
		if got := values(complete(app, tc.words, src)); got != tc.want {
			t.Errorf("kandev %s<TAB> = %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

func TestComplete_WithoutAHomeStillCompletesCommandsAndAgents(t *testing.T) {
	app := grammar(t)
	src := completionSource{config: &config.Config{}}
	if got := values(complete(app, []string{"status", ""}, src)); got != "" {
		t.Fatalf("ids without a home: %q", got)
	}
	if got := values(complete(app, []string{"start", "--agent", "de"}, src)); got != "demo" {
		t.Fatalf("agents: %q", got)
	}
	flags := values(complete(app, []string{"prune", "--"}, src))
	for _, want := range []string{"--older-than", "--state", "--dry-run", "--json", "--home", "--help"} {
		if !strings.Contains(" "+flags+" ", " "+want+" ") {
			t.Errorf("prune flags lack %s: %s", want, flags)
		}
	}
	if strings.Index(flags, "--older-than") > strings.Index(flags, "--home") {
		t.Errorf("the command's own flags should come before the global ones: %s", flags)
	}
}
