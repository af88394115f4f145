//go:build unix

package e2e_test

import (
	"strings"
	"testing"
)

// Under ask, the agent's question is asked on the terminal of the command
// that sent the prompt, wherever its owner runs, and the line typed is
// the answer.
func TestQuestion_AskedOnTheTerminalUnderAskWhereverTheOwnerRuns(t *testing.T) {
	t.Parallel()
	for _, place := range ownerPlaces {
		t.Run(place.name, func(t *testing.T) {
			w := defaultWorld(t)
			id, flags := place.session(w)
			tm := w.inTerminal(append([]string{"--permissions", "ask"}, promptArgs(id, flags, "/ask Which colour?")...)...)
			tm.waitScreen("Which colour? (")
			tm.keys("blue", "Enter")
			if code := terminalExit(tm); code != "0" {
				t.Fatalf("exit %s:\n%s", code, tm.screen())
			}
			if said := agentSaid(w.events(id)); !strings.Contains(said, "answer: blue") {
				t.Fatalf("the agent got %q\n%s", said, tm.screen())
			}
			res := w.resolutions(id)
			if len(res) != 1 || res[0]["action"] != "accept" {
				t.Fatalf("resolution: %+v", res)
			}
		})
	}
}
