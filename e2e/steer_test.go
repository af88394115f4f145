//go:build unix

package e2e_test

// kandev prompt --steer adds a message to the turn that runs now where the
// agent steers (the demo agent does unless --no-steer), and otherwise
// queues it behind that turn and says so. The default path first: the
// turn runs in a warm owner an earlier command left.

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// steerPlaces are where the running turn's owner runs.
var steerPlaces = []struct {
	name string
	// busy are the flags of the prompt that runs the long turn.
	busy []string
}{
	{name: "warm owner an earlier command left"},
	{name: "owner in the foreground of another command (no linger)", busy: []string{"--linger", "0"}},
}

// steerWorld is a world with the demo agent (steers) and nosteer (does not).
func steerWorld(t *testing.T) *world {
	w := defaultWorld(t)
	w.config("[agents.nosteer]\ncommand = [\"{kandev}\", \"demo-agent\", \"--no-steer\"]\n")
	return w
}

func TestPromptSteer_AddsTheMessageToTheRunningTurn(t *testing.T) {
	t.Parallel()
	for _, place := range steerPlaces {
		t.Run(place.name, func(t *testing.T) {
			w := steerWorld(t)
			id, r := w.start("remember APPLE")
			if r.code != 0 {
				t.Fatal(r)
			}
			w.closeOnCleanup(id)
			turn, busy := w.busyTurn(id, place.busy)
			r = w.run("prompt", id, "--steer", "/say steered in")
			if r.code != 0 || !strings.Contains(r.stdout, "steered in") {
				t.Fatalf("prompt --steer: %s", r)
			}
			if strings.Contains(r.stderr, "queued behind") {
				t.Fatalf("the steered prompt says it queued: %s", r)
			}
			b := <-busy
			if b.code != 0 || !strings.Contains(b.stdout, "steered in") {
				t.Fatalf("the running turn's own command does not show the steered answer: %s", b)
			}
			evs := w.events(id)
			st := steered(evs)
			if len(st) != 1 || st[0].TurnID != turn || st[0].Content != "/say steered in" || st[0].InputID == "" {
				t.Fatalf("steered user messages %+v, want one in turn %s", st, turn)
			}
			if got := lastTurn(evs); got != turn {
				t.Fatalf("a turn %s started after the steered one %s: the message was queued, not steered", got, turn)
			}
			if txt := agentText(evs, turn); !strings.Contains(txt, "after") || !strings.Contains(txt, "steered in") {
				t.Fatalf("turn %s says %q", turn, txt)
			}
			if stop := turnEnd(evs, turn); stop != eventlog.StopEndTurn {
				t.Fatalf("turn %s ended %q", turn, stop)
			}
			if tr := w.mustRun("transcript", id); !strings.Contains(tr.stdout, "/say steered in") {
				t.Fatalf("the transcript lacks the steered message:\n%s", tr.stdout)
			}
		})
	}
}

func TestPromptSteer_WhereTheAgentDoesNotSteerQueuesBehindTheTurnAndSaysSo(t *testing.T) {
	t.Parallel()
	for _, place := range steerPlaces {
		t.Run(place.name, func(t *testing.T) {
			w := steerWorld(t)
			id, r := w.start("--agent", "nosteer", "remember APPLE")
			if r.code != 0 {
				t.Fatal(r)
			}
			w.closeOnCleanup(id)
			turn, busy := w.busyTurn(id, place.busy)
			r = w.run("prompt", id, "--steer", "/say next one")
			want := "queued behind the running turn in " + id + ": agent nosteer does not offer steering"
			if r.code != 0 || !strings.Contains(r.stdout, "next one") || !strings.Contains(r.stderr, want) {
				t.Fatalf("prompt --steer to an agent that does not steer: %s\nwant the line %q", r, want)
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
				t.Fatalf("more than one line on stderr: %s", r)
			}
			if b := <-busy; b.code != 0 || strings.Contains(b.stdout, "next one") {
				t.Fatalf("the running turn: %s", b)
			}
			evs := w.events(id)
			if st := steered(evs); len(st) != 0 {
				t.Fatalf("steered %+v into an agent that does not steer", st)
			}
			next := lastTurn(evs)
			if next == turn || !strings.Contains(agentText(evs, next), "next one") {
				t.Fatalf("the prompt did not run as the next turn (%s after %s)", next, turn)
			}
		})
	}
}

func TestPromptSteer_JSONQuietAndKeyBehaveAsForAnyPrompt(t *testing.T) {
	t.Parallel()
	w := steerWorld(t)
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	turn, busy := w.busyTurn(id, nil)
	js := w.run("--json", "prompt", id, "--steer", "--key", "k1", "/say via json")
	if js.code != 0 {
		t.Fatal(js)
	}
	lines := strings.Split(strings.TrimSpace(js.stdout), "\n")
	sawSteer := false
	for _, l := range lines {
		var e eventlog.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not NDJSON: %q in\n%s", l, js.stdout)
		}
		sawSteer = sawSteer || e.Type == eventlog.EventUserMessage && e.Source == eventlog.SourceSteer && e.Key == "k1"
	}
	var last struct {
		ID string `json:"id"`
	}
	decodeJSON(t, lines[len(lines)-1], &last)
	if !sawSteer || last.ID != id {
		t.Fatalf("--json: want the steered user_message with its key and the session object last:\n%s", js.stdout)
	}
	<-busy
	// A retry with the same key prints that turn again; nothing is sent twice.
	again := w.run("-q", "prompt", id, "--steer", "--key", "k1", "/say via json")
	if again.code != 0 || !strings.Contains(again.stdout, "via json") {
		t.Fatalf("the retry: %s", again)
	}
	evs := w.events(id)
	if st := steered(evs); len(st) != 1 || st[0].TurnID != turn {
		t.Fatalf("steered %+v, want once into %s", st, turn)
	}
	if got := lastTurn(evs); got != turn {
		t.Fatalf("the retry ran a new turn %s", got)
	}
	// With no turn running, --steer is an ordinary prompt.
	q := w.run("-q", "prompt", id, "--steer", "/say idle now")
	if q.code != 0 || strings.TrimSpace(q.stdout) != "idle now" || q.stderr != "" {
		t.Fatalf("--steer with no running turn: %s", q)
	}
}

// The demo agent's switch: its initialize answer advertises steering
// unless --no-steer.
func TestDemoAgent_AdvertisesSteeringUnlessNoSteer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"--no-steer"}, false}} {
		w := newWorld(t)
		cmd := exec.Command(kandevBin, append([]string{"demo-agent"}, c.args...)...)
		cmd.Env = w.env
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
		line, err := bufio.NewReader(out).ReadString('\n') // the answer, before stdin closes
		in.Close()
		cmd.Wait()
		if err != nil {
			t.Fatalf("demo-agent %v: no initialize answer: %v", c.args, err)
		}
		if got := strings.Contains(line, `"steering":{"supported":true}`); got != c.want {
			t.Fatalf("demo-agent %v: steering advertised %v, want %v:\n%s", c.args, got, c.want, line)
		}
	}
}

// Ctrl-C in the command whose message joined the running turn cancels that
// turn, as it would cancel a turn of its own (exit 130 for both commands).
func TestPromptSteer_CtrlCOfTheSteeringCommandCancelsTheTurnItJoined(t *testing.T) {
	t.Parallel()
	w := steerWorld(t)
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	turn, busy := w.busyTurn(id, nil)
	cmd := exec.Command(kandevBin, "prompt", id, "--steer", "/say never said")
	cmd.Dir, cmd.Env = w.cwd, w.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the message to join the turn", func() bool { return len(steered(w.eventsSoFar(id))) == 1 })
	cmd.Process.Signal(os.Interrupt)
	assertSteerCancelled(t, w, id, turn, cmd, busy)
}

// A turn a --steer joined, whose owner is then killed, is continued once
// with its own request quoted and the steered message after it: the
// continuation quoted only the steer (14 of 14 trials). Either the command
// that followed the turn continues it as it takes the owner's place, or the
// resume after it does.
func TestPromptSteer_AContinuationQuotesTheTurnsRequestAndItsSteer(t *testing.T) {
	t.Parallel()
	w := steerWorld(t)
	id, r := w.start("remember APPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.closeOnCleanup(id)
	turn, busy := w.busyTurnWith(id, "/say working\n/sleep 20000\n/say ORIGINAL-END")
	if r := w.run("prompt", id, "--steer", "--no-follow", "STEERED-WORDS please"); r.code != 0 {
		t.Fatalf("prompt --steer --no-follow: %s", r)
	}
	waitFor(t, 20*time.Second, "the steered message in the turn", func() bool { return len(steered(w.eventsSoFar(id))) == 1 })
	if pid := w.session(id).OwnerPID; pid > 0 {
		kill(pid, syscall.SIGKILL)
	}
	<-busy // the command that followed the turn takes the owner's place, or resume does
	w.mustRun("resume", id)
	var cont string
	for _, e := range w.events(id) {
		if e.Type == eventlog.EventUserMessage && e.TurnID != turn && strings.Contains(e.Content, "interrupted") {
			cont = e.Content
		}
	}
	i, j := strings.Index(cont, "ORIGINAL-END"), strings.Index(cont, "STEERED-WORDS")
	if i < 0 || j < i {
		t.Fatalf("the continuation quotes %q: want the turn's own request, then the steered message", cont)
	}
}
