package commands

import "testing"

func TestDecideTrust_AScriptNeverTrustsWithoutYes(t *testing.T) {
	cases := []struct {
		name                           string
		pending, yes, dryRun, terminal bool
		want                           trustStep
	}{
		{"a dry run only shows, even with --yes", true, true, true, true, trustShowOnly},
		{"a dry run of a session that waits for nothing only shows", false, false, true, false, trustShowOnly},
		{"nothing pending needs no answer", false, false, false, false, trustNothingWaits},
		{"--yes records without a terminal", true, true, false, false, trustRecord},
		{"--yes records on a terminal without asking", true, true, false, true, trustRecord},
		{"a terminal asks", true, false, false, true, trustAsk},
		{"no terminal and no --yes refuses", true, false, false, false, trustRefuse},
	}
	for _, c := range cases {
		if got := decideTrust(c.pending, c.yes, c.dryRun, c.terminal); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}
