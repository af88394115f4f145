package agentswitch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/state"
)

// ErrBadAgent is a switch to an agent kandev does not know or that is not
// installed here: a usage error, whose message names the installed agents.
var ErrBadAgent = errors.New("no such installed agent")

// badAgent is an ErrBadAgent with the one line a person reads.
type badAgent struct{ msg string }

func (e badAgent) Error() string        { return e.msg }
func (e badAgent) Is(target error) bool { return target == ErrBadAgent }

// Agent is one agent profile as a switch sees it.
type Agent struct {
	Name      string
	Installed bool
}

// Agents are the profiles of cfg, in their order, with whether each is
// installed on this machine.
func Agents(cfg *config.Config) []Agent {
	var out []Agent
	for _, p := range acp.Profiles(cfg) {
		out = append(out, Agent{Name: p.Name, Installed: p.Installed()})
	}
	return out
}

// InstalledNames are the names of the installed agents.
func InstalledNames(agents []Agent) []string {
	var names []string
	for _, a := range agents {
		if a.Installed {
			names = append(names, a.Name)
		}
	}
	return names
}

// Facts are what a switch depends on.
type Facts struct {
	SessionID string
	From, To  string
	Agents    []Agent
	State     string // the record's state
	// Running: a turn is under way (a live owner runs one, holds a
	// permission request, or has inputs queued, or the record says so).
	Running bool
}

// Verdict is what Decide allows.
type Verdict string

// Verdicts, the first that applies wins in this order.
const (
	Unknown      Verdict = "unknown_agent" // no profile of that name: exit 2
	NotInstalled Verdict = "not_installed" // a profile, not installed here: exit 2
	Finished     Verdict = "finished"      // a terminal session: exit 5
	Same         Verdict = "same"          // it runs that agent already: nothing to do
	Busy         Verdict = "busy"          // a turn runs: exit 3
	Go           Verdict = "switch"
)

// Decide is the rule of a switch.
func Decide(f Facts) Verdict {
	var to *Agent
	for i := range f.Agents {
		if f.Agents[i].Name == f.To {
			to = &f.Agents[i]
		}
	}
	switch {
	case to == nil:
		return Unknown
	case !to.Installed && f.To != f.From:
		return NotInstalled
	case state.IsTerminal(f.State):
		return Finished
	case f.To == f.From:
		return Same
	case f.Running:
		return Busy
	}
	return Go
}

// Refusal is the one-line error of a refusing verdict (nil for Go and Same).
func Refusal(f Facts, v Verdict) error {
	id := f.SessionID
	installed := strings.Join(InstalledNames(f.Agents), ", ")
	switch v {
	case Unknown:
		return badAgent{fmt.Sprintf("unknown agent %q; installed agents are %s (kandev agents lists every profile)", f.To, installed)}
	case NotInstalled:
		return badAgent{fmt.Sprintf("agent %s is not installed here; installed agents are %s (kandev agents says how to install it)", f.To, installed)}
	case Finished:
		return fmt.Errorf("%w: session %s is %s; start a follow-up on the other agent instead: kandev start --parent %s --agent %s", owner.ErrNotResumable, id, f.State, id, f.To)
	case Busy:
		return fmt.Errorf("%w: session %s is running a turn; wait for it to end (kandev wait %s --until idle) or cancel it (kandev cancel %s), then switch", state.ErrOwnerBusy, id, id, id)
	}
	return nil
}
