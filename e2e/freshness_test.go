package e2e_test

// The freshness run (KANDEV_E2E_LATEST=1): the newest published version of
// each real agent, asked of the npm registry at run time, installed into
// the cache folder and run offline against its fake model server through a
// short scenario table. It prints a version x scenario matrix and fails when
// a scenario fails, so a release that breaks kandev shows before the suites'
// pins are moved. docs/testing.md gives the command; CI does not run it.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// freshAgent is one agent of the freshness run.
type freshAgent struct {
	name    string // the kandev agent the rig configures
	pkg     string // its npm package
	pinned  string // the version the npm-gated suites pin
	install func(version string) (bin, skip string)
	rig     func(t *testing.T, bin string) freshRig
}

// freshRig is a world whose agent runs the installed version.
type freshRig struct {
	w        *world
	agent    string
	reqLog   string             // the fake model server's request log
	noneLeft func(after string) // fails the test while an agent process runs
	// beforeRestore, if not nil, runs before the prompt that restores the agent.
	beforeRestore func(id string)
}

var freshAgents = []freshAgent{
	{name: "claude", pkg: claudeACPPackage, pinned: claudeACPVersion, install: claudeInstallVersion,
		rig: func(t *testing.T, bin string) freshRig {
			r := newClaudeRigWith(t, newWorld(t), bin)
			return freshRig{w: r.world, agent: "claude", reqLog: r.reqLog, noneLeft: r.assertNoAgentSurvives}
		}},
	{name: "codex", pkg: codexPackage, pinned: codexVersion, install: codexInstallVersion,
		rig: func(t *testing.T, bin string) freshRig {
			r := newCodexRig(t, codexOptions{bin: bin})
			return freshRig{w: r.world, agent: "codex", reqLog: r.reqLog, noneLeft: r.assertNoAgentSurvives}
		}},
	{name: "gemini", pkg: geminiPackage, pinned: geminiVersion, install: geminiInstallVersion,
		rig: func(t *testing.T, bin string) freshRig {
			r := newGeminiRigWith(t, bin)
			// Gemini CLI finds a saved session only from the next minute on.
			return freshRig{w: r.world, agent: geminiAgent, reqLog: r.reqLog, noneLeft: r.assertNoAgentSurvives,
				beforeRestore: func(id string) {
					evs := r.events(id)
					waitForNextMinute(eventTime(t, evs[len(evs)-1]))
				}}
		}},
	{name: "opencode", pkg: openCodePackage, pinned: openCodeVersion, install: openCodeInstallVersion,
		rig: func(t *testing.T, bin string) freshRig {
			r := newOpenCodeRigWith(t, bin)
			return freshRig{w: r.world, agent: r.name, reqLog: r.fake.reqLog,
				noneLeft: func(after string) { r.assertNoAgentSurvives("", after) }}
		}},
	{name: "copilot", pkg: copilotPackage, pinned: copilotVersion, install: copilotInstallVersion,
		rig: func(t *testing.T, bin string) freshRig {
			r := newCopilotRigWith(t, bin)
			return freshRig{w: r.world, agent: r.name, reqLog: r.fake.reqLog,
				noneLeft: func(after string) { r.assertNoAgentSurvives("", after) }}
		}},
}

// freshScenario is one row of the table: it returns "" or what went wrong.
type freshScenario struct {
	name     string
	restores bool // the rig's beforeRestore runs first, untimed
	run      func(r freshRig, id *string) string
}

var freshScenarios = []freshScenario{
	{"start + remember", false, func(r freshRig, id *string) string {
		res := r.w.run("start", "--agent", r.agent, "remember the word PAPAYA for later")
		if res.code != 0 {
			return fmt.Sprintf("start: exit %d: %s", res.code, lastLines(res.stderr, 2))
		}
		*id = strings.TrimSpace(strings.SplitN(res.stdout, "\n", 2)[0])
		evs := r.w.events(*id)
		if got := agentText(evs, lastTurn(evs)); !strings.Contains(got, "remember") {
			return fmt.Sprintf("the answer %q does not come from the fake model", trimTo(got, 80))
		}
		return ""
	}},
	{"restore + recall", true, func(r freshRig, id *string) string {
		if *id == "" {
			return "no session"
		}
		res := r.w.run("prompt", *id, "which word did I ask you to remember")
		if res.code != 0 {
			return fmt.Sprintf("prompt: exit %d: %s", res.code, lastLines(res.stderr, 2))
		}
		starts := ofType(r.w.events(*id), eventlog.EventAgentStarted)
		if last := starts[len(starts)-1]; last.Restore == "new" || last.FallbackReason != "" {
			return fmt.Sprintf("not restored natively: restore %s (%s)", last.Restore, trimTo(last.FallbackReason, 80))
		}
		if req := lastRequestWith(r.reqLog, "which word did I ask"); !strings.Contains(req, "PAPAYA") {
			return "the model was not shown the first turn"
		}
		return ""
	}},
	{"warm prompt", false, func(r freshRig, id *string) string {
		if *id == "" {
			return "no session"
		}
		r.w.closeOnCleanup(*id)
		if res := r.w.run("prompt", *id, "first lingering prompt about pears", "--linger", "60s"); res.code != 0 {
			return fmt.Sprintf("prompt --linger: exit %d: %s", res.code, lastLines(res.stderr, 2))
		}
		starts := len(ofType(r.w.events(*id), eventlog.EventAgentStarted))
		res := r.w.run("prompt", *id, "warm prompt about plums")
		if res.code != 0 {
			return fmt.Sprintf("warm prompt: exit %d: %s", res.code, lastLines(res.stderr, 2))
		}
		evs := r.w.events(*id)
		if n := len(ofType(evs, eventlog.EventAgentStarted)); n != starts {
			return "the prompt started the agent again instead of reattaching"
		}
		if got := agentText(evs, lastTurn(evs)); !strings.Contains(got, "plums") {
			return fmt.Sprintf("the warm answer %q", trimTo(got, 80))
		}
		if res := r.w.run("close", *id); res.code != 0 {
			return fmt.Sprintf("close: exit %d", res.code)
		}
		r.w.waitOwnerGone(*id, 20*time.Second)
		return ""
	}},
}

// lastRequestWith is the last line of a fake server's request log that
// holds text, "" when none does.
func lastRequestWith(log, text string) string {
	b, _ := os.ReadFile(log)
	lines := strings.Split(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], text) {
			return lines[i]
		}
	}
	return ""
}

// npmLatest asks the registry for the newest published version of pkg.
func npmLatest(pkg string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "view", pkg, "version").Output()
	if err != nil {
		return "", fmt.Errorf("npm view %s version: %v", pkg, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func TestFreshness_TheNewestReleaseOfEachAgentPassesTheScenarioTable(t *testing.T) {
	if os.Getenv("KANDEV_E2E_LATEST") != "1" {
		t.Skip("SKIP: the freshness run installs the newest release of every agent from npm; set KANDEV_E2E_LATEST=1 to run it")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("SKIP: npm is not installed")
	}
	type row struct {
		agent, version string
		cells          []string
	}
	var rows []row
	for _, ag := range freshAgents {
		rw := row{agent: ag.name, version: "?"}
		t.Run(ag.name, func(t *testing.T) {
			version, err := npmLatest(ag.pkg)
			if err != nil {
				rw.cells = append(rw.cells, "no version: "+err.Error())
				t.Fatal(err)
			}
			rw.version = version
			if version != ag.pinned {
				rw.version += " (suites: " + ag.pinned + ")"
			}
			began := time.Now()
			bin, skip := ag.install(version)
			if bin == "" {
				rw.cells = append(rw.cells, "install failed")
				t.Fatalf("%s@%s: %s", ag.pkg, version, skip)
			}
			t.Logf("%s@%s installed (or found) in %s", ag.pkg, version, time.Since(began).Round(time.Millisecond))
			r := ag.rig(t, bin)
			r.w.underCI() // the table restores each agent in a new command: no warm owner
			var id string
			for _, sc := range freshScenarios {
				if sc.restores && r.beforeRestore != nil && id != "" {
					r.beforeRestore(id)
				}
				began := time.Now()
				why := sc.run(r, &id)
				took := time.Since(began).Round(10 * time.Millisecond)
				if why != "" {
					t.Errorf("%s %s: %s: %s", ag.name, version, sc.name, why)
					rw.cells = append(rw.cells, "FAIL "+took.String())
					continue
				}
				rw.cells = append(rw.cells, "ok "+took.String())
			}
			r.noneLeft("the scenarios")
		})
		rows = append(rows, rw)
	}

	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "agent\tnewest version")
	for _, sc := range freshScenarios {
		fmt.Fprintf(tw, "\t%s", sc.name)
	}
	fmt.Fprintln(tw)
	for _, rw := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", rw.agent, rw.version, strings.Join(rw.cells, "\t"))
	}
	tw.Flush()
	t.Logf("freshness matrix (%s):\n%s", time.Now().UTC().Format("2006-01-02"), b.String())
}
