//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// The event types a kill can be tied to (the first one kandev prints).
const (
	evAgentStarted  = "agent_started"
	evTurnStarted   = "turn_started"
	evAgentMessage  = "agent_message"
	evToolCall      = "tool_call"
	evPermRequested = "permission_requested"
	evToolResult    = "tool_result"
	evTurnEnded     = "turn_ended"
)

var killEvents = []string{evAgentStarted, evTurnStarted, evAgentMessage, evToolCall, evPermRequested, evToolResult, evTurnEnded}

// scenario is one kind of turn the demo agent runs.
type scenario struct {
	name string
	// delay range (ms) of the profile's `demo-agent --delay` (0: no switch).
	delayMin, delayMax int
	// boot > 0 wraps the agent in `sh -c "sleep BOOT; exec ..."` (kill during
	// launch / initialize).
	bootMin, bootMax int
	perms            string // --permissions for the killed command ("" = default)
	pty              bool   // run the killed command in a pty (script -qfec) so `ask` asks
	events           []string
	prompt           func(r *rand.Rand) string
}

var words = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima
mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu
resume durable session agent crash journal append sequence repair continue`)

func sentence(r *rand.Rand, minLen int) string {
	var b strings.Builder
	for b.Len() < minLen {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

var base = []string{evAgentStarted, evTurnStarted, evAgentMessage, evTurnEnded}

var scenarios = []*scenario{
	{name: "say", delayMin: 60, delayMax: 120, events: base,
		prompt: func(r *rand.Rand) string {
			n := 3 + r.IntN(3)
			var lines []string
			for i := 0; i < n; i++ {
				lines = append(lines, "/say "+sentence(r, 120+r.IntN(200)))
			}
			return strings.Join(lines, "\n")
		}},
	{name: "read", delayMin: 120, delayMax: 300, events: []string{evAgentStarted, evTurnStarted, evToolCall, evToolResult, evAgentMessage, evTurnEnded},
		prompt: func(r *rand.Rand) string { return "/read notes.txt" }},
	{name: "write", delayMin: 120, delayMax: 300, perms: "approve-all",
		events: []string{evAgentStarted, evTurnStarted, evToolCall, evPermRequested, evToolResult, evAgentMessage, evTurnEnded},
		prompt: func(r *rand.Rand) string { return "/write out.txt " + strings.ToUpper(sentence(r, 10)) }},
	{name: "sleep", events: base,
		prompt: func(r *rand.Rand) string {
			return "/say going to sleep now\n/sleep 3000\n/say awake again"
		}},
	{name: "bulk", events: base,
		prompt: func(r *rand.Rand) string { return "/bulk 20000" }},
	{name: "mix", delayMin: 30, delayMax: 60, perms: "approve-all", events: killEvents,
		prompt: func(r *rand.Rand) string {
			parts := []string{
				"/say " + sentence(r, 60),
				"/read notes.txt",
				"/write out.txt " + strings.ToUpper(sentence(r, 8)),
				"/sleep " + fmt.Sprint(100+r.IntN(400)),
				"/bulk " + fmt.Sprint(5+r.IntN(10)),
				"/think " + sentence(r, 40),
			}
			r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			k := 3 + r.IntN(len(parts)-2)
			out := parts[:k]
			// At least one tool call in every mix.
			has := false
			for _, p := range out {
				has = has || strings.HasPrefix(p, "/read") || strings.HasPrefix(p, "/write")
			}
			if !has {
				out = append(out, "/read notes.txt")
			}
			return strings.Join(out, "\n")
		}},
	{name: "perm-ask", delayMin: 50, delayMax: 150, perms: "ask", pty: true,
		events: []string{evAgentStarted, evTurnStarted, evAgentMessage, evToolCall, evPermRequested},
		prompt: func(r *rand.Rand) string {
			return "/say about to write a file\n/write out.txt " + strings.ToUpper(sentence(r, 8))
		}},
	{name: "subagent", delayMin: 40, delayMax: 100, perms: "approve-all",
		events: []string{evTurnStarted, "child_started", "child_tool_call", "child_tool_result", "child_message", evTurnEnded},
		prompt: func(r *rand.Rand) string {
			return "/say delegating\n/subagent scout /write out.txt " + strings.ToUpper(sentence(r, 8)) + ";/say " + sentence(r, 40) + "\n/say back"
		}},
	{name: "slowboot", delayMin: 40, delayMax: 100, bootMin: 300, bootMax: 800, events: base,
		prompt: func(r *rand.Rand) string { return "/say hello after a slow boot: " + sentence(r, 40) }},
}

func findScenario(name string) *scenario {
	for _, s := range scenarios {
		if s.name == name {
			return s
		}
	}
	return nil
}

func scenarioNames() string {
	var n []string
	for _, s := range scenarios {
		n = append(n, s.name)
	}
	return strings.Join(n, ",")
}

// Trial kinds: a demo-agent turn that gets a signal, or an operation on
// prepared sessions that gets SIGKILLed.
const (
	kindTurn   = "turn"
	kindImport = "import"
	kindPrune  = "prune"
	kindRepair = "repair"
	kindStop   = "stop"
)

// The signals a turn gets: SIGKILL, SIGTERM, SIGTERM twice (the second while
// kandev stops), SIGHUP, SIGINT.
const (
	sigKill  = "SIGKILL"
	sigTerm  = "SIGTERM"
	sigTerm2 = "SIGTERMx2"
	sigHup   = "SIGHUP"
	sigInt   = "SIGINT"
)

// cancelGrace is the runs' [agent] cancel_grace_seconds: SIGTERM must end
// kandev within it (plus stopGraceSlack on a loaded machine).
const cancelGrace = 2

// opAgentDelay paces the demo agent of the turn an operation trial
// interrupts, so the kill at its tool call lands before the result.
const opAgentDelay = 150

type choice struct {
	name   string
	weight int
}

var trialKinds = []choice{{kindTurn, 5}, {kindImport, 1}, {kindPrune, 1}, {kindRepair, 1}, {kindStop, 1}, {kindACPLoad, 1},
	{kindApprove, 1}, {kindParked, 1}, {kindExpiry, 1}, {kindTrust, 1}, {kindPull, 1}, {kindClaimRelease, 1},
	{kindFollower, 2}, {kindDetached, 2}, {kindTwo, 2}}

var signalKinds = []choice{{sigKill, 2}, {sigTerm, 2}, {sigTerm2, 1}, {sigHup, 1}, {sigInt, 1}}

func choiceNames(cs []choice) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.name)
	}
	return n
}

// anyAllowed reports whether allow (nil: all) lets one of cs be drawn.
func anyAllowed(cs []choice, allow map[string]bool) bool {
	for _, c := range cs {
		if allow == nil || allow[c.name] {
			return true
		}
	}
	return false
}

// weighted draws one of cs (only those in allow, when it is not nil).
func weighted(r *rand.Rand, cs []choice, allow map[string]bool) string {
	total := 0
	for _, c := range cs {
		if allow == nil || allow[c.name] {
			total += c.weight
		}
	}
	n := r.IntN(total)
	for _, c := range cs {
		if allow != nil && !allow[c.name] {
			continue
		}
		if n -= c.weight; n < 0 {
			return c.name
		}
	}
	return cs[0].name
}

// plan is everything random about one run, drawn before it starts.
type plan struct {
	idx        int
	kind       string // "turn" or an operation: import, prune, repair, stop
	signal     string // sigKill, sigTerm, sigTerm2, sigHup, sigInt (operations: sigKill)
	secondAt   time.Duration
	opFrac     float64 // an operation's kill point, as a fraction of its calibrated duration
	opSessions int     // sessions prepared for an operation
	scen       *scenario
	mode       string // "start" (new session with the prompt) or "prompt" (on an idle session)
	killDelay  time.Duration
	killEvent  string // "" = kill at killDelay after the command started
	agentDelay int    // ms
	boot       int    // ms
	prompt     string
	two        *twoPlan // a two-machine trial's schedule
}

func (p *plan) killClass() string {
	if p.killEvent == "" {
		return "delay"
	}
	return p.killEvent
}

func makePlan(o *options, i int) *plan {
	r := rngFor(o.seed, i)
	p := &plan{idx: i, kind: weighted(r, trialKinds, o.kinds), signal: sigKill}
	if p.kind == kindTwo {
		p.two, p.agentDelay = makeTwoPlan(r), 20
		return p
	}
	if p.kind != kindTurn && !defaultKinds[p.kind] {
		// Inside the operation: its last part races kandev's own exit.
		p.opFrac = 0.85 * r.Float64()
		p.opSessions = 2 + r.IntN(4)
		p.agentDelay = opAgentDelay
		return p
	}
	if defaultKinds[p.kind] {
		allow := o.signals
		if !anyAllowed(defaultSignals[p.kind], allow) {
			allow = nil
		}
		p.signal = weighted(r, defaultSignals[p.kind], allow)
	} else {
		p.signal = weighted(r, signalKinds, o.signals)
	}
	var pool []*scenario
	for _, s := range scenarios {
		if (o.scenarios == nil || o.scenarios[s.name]) && !(s.pty && (p.signal == sigHup || defaultKinds[p.kind])) {
			pool = append(pool, s)
		}
	}
	if len(pool) == 0 {
		pool = []*scenario{findScenario("say")}
	}
	p.scen = pool[r.IntN(len(pool))]
	p.secondAt = time.Duration(5+r.IntN(150)) * time.Millisecond
	var modes []string
	for _, m := range []string{"start", "prompt"} {
		if o.modes == nil || o.modes[m] {
			modes = append(modes, m)
		}
	}
	p.mode = modes[r.IntN(len(modes))]
	// Half the runs kill at a random delay, half at a random event type the
	// scenario produces; -kill narrows the choice.
	var evs []string
	for _, e := range p.scen.events {
		if defaultKinds[p.kind] && p.mode == "prompt" && e == evAgentStarted {
			continue // a prompt that follows a detached owner prints its own turn only
		}
		if o.kills == nil || o.kills[e] {
			evs = append(evs, e)
		}
	}
	useDelay := r.IntN(2) == 0
	delay := time.Duration(r.IntN(2001)) * time.Millisecond
	ev := ""
	if len(evs) > 0 {
		ev = evs[r.IntN(len(evs))]
	}
	if o.kills != nil {
		switch {
		case !o.kills["delay"]:
			useDelay = false
		case len(evs) == 0:
			useDelay = true
		}
	}
	if useDelay || ev == "" {
		p.killDelay = delay
	} else {
		p.killEvent = ev
	}
	if p.scen.delayMax > 0 {
		p.agentDelay = p.scen.delayMin + r.IntN(p.scen.delayMax-p.scen.delayMin+1)
	}
	if p.scen.bootMax > 0 {
		p.boot = p.scen.bootMin + r.IntN(p.scen.bootMax-p.scen.bootMin+1)
	}
	p.prompt = p.scen.prompt(r)
	return p
}

// configTOML is the run's $KANDEV_HOME/config.toml: one profile, "cm".
func (p *plan) configTOML(kandev string) string {
	cmd := []string{kandev, "demo-agent"}
	if p.agentDelay > 0 {
		cmd = append(cmd, "--delay", fmt.Sprint(p.agentDelay))
	}
	if p.boot > 0 {
		cmd = []string{"/bin/sh", "-c", fmt.Sprintf("sleep %.3f; exec %s", float64(p.boot)/1000, shellJoin(cmd))}
	}
	// A JSON array of strings is a valid TOML array.
	b, _ := json.Marshal(cmd)
	return fmt.Sprintf("default_agent = \"cm\"\n\n[agent]\ncancel_grace_seconds = %d\n\n[agents.cm]\ncommand = %s\n", cancelGrace, b)
}

func (p *plan) describe() string {
	if p.two != nil {
		return fmt.Sprintf("run %d: two machines, %s", p.idx, p.two.describe())
	}
	if defaultKinds[p.kind] {
		return p.describeDefault()
	}
	if p.kind != kindTurn {
		return fmt.Sprintf("run %d: %s killed at %.2f of its duration, %d sessions", p.idx, p.kind, p.opFrac, p.opSessions)
	}
	k := p.killClass()
	if k == "delay" {
		k = fmt.Sprintf("delay %dms", p.killDelay.Milliseconds())
	} else {
		k = "at first " + k
	}
	extra := ""
	if p.agentDelay > 0 {
		extra += fmt.Sprintf(" agent-delay=%dms", p.agentDelay)
	}
	if p.boot > 0 {
		extra += fmt.Sprintf(" boot=%dms", p.boot)
	}
	sig := p.signal
	if p.signal == sigTerm2 {
		sig = fmt.Sprintf("%s (second after %dms)", sig, p.secondAt.Milliseconds())
	}
	return fmt.Sprintf("run %d: %s/%s %s %s%s", p.idx, p.scen.name, p.mode, sig, k, extra)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%", c))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
