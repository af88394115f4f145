package setup

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// refPattern is a ${VAR} reference.
var refPattern = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Lookup finds an environment variable (os.LookupEnv).
type Lookup func(string) (string, bool)

// Expand is the servers as the agent is given them (ACP mcpServers), every
// ${VAR} in env, header values and urls replaced from lookup. Missing names
// the variables that were not set (they expand to ""), once each, in order.
// The result holds secrets: it goes to the agent, never to the record or log.
func Expand(servers []state.MCPServer, lookup Lookup) (out []sdk.McpServer, missing []string) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	seen := map[string]bool{}
	expand := func(s string) string {
		return refPattern.ReplaceAllStringFunc(s, func(ref string) string {
			name := refPattern.FindStringSubmatch(ref)[1]
			v, ok := lookup(name)
			if !ok && !seen[name] {
				seen[name] = true
				missing = append(missing, name)
			}
			return v
		})
	}
	out = []sdk.McpServer{}
	for _, s := range servers {
		switch s.Type {
		case "http", "sse":
			var hs []sdk.HttpHeader
			for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
				hs = append(hs, sdk.HttpHeader{Name: k, Value: expand(s.Headers[k])})
			}
			if hs == nil {
				hs = []sdk.HttpHeader{}
			}
			if s.Type == "http" {
				out = append(out, sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: s.Name, Type: "http", Url: expand(s.URL), Headers: hs}})
			} else {
				out = append(out, sdk.McpServer{Sse: &sdk.McpServerSseInline{Name: s.Name, Type: "sse", Url: expand(s.URL), Headers: hs}})
			}
		default:
			env := []sdk.EnvVariable{}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				env = append(env, sdk.EnvVariable{Name: k, Value: expand(s.Env[k])})
			}
			args := s.Args
			if args == nil {
				args = []string{}
			}
			out = append(out, sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: s.Name, Command: s.Command, Args: args, Env: env}})
		}
	}
	return out, missing
}

// Offered is what a restored agent answered about its setup (the modes,
// models and configOptions of session/new, load or resume). A nil list
// means the agent offers none of that kind.
type Offered struct {
	Modes   []string
	Mode    string
	Models  []string
	Model   string
	Options map[string]Option
}

// Option is one config option the agent offers.
type Option struct {
	Current string
	Values  []string // the select's values; nil for a boolean
	Boolean bool
	// Category is what the option chooses, when the agent says: "mode",
	// "model" or "thought_level" (ACP's categories).
	Category string
}

// Models is a model list outside the config options: the one agents that
// predate ACP 1.x's model option still answer with (nil: none).
type Models struct {
	Current   string
	Available []string
}

// OfferedBy reads an agent's answer.
func OfferedBy(modes *sdk.SessionModeState, models *Models, opts []sdk.SessionConfigOption) Offered {
	var o Offered
	if modes != nil {
		o.Modes = []string{}
		for _, m := range modes.AvailableModes {
			o.Modes = append(o.Modes, string(m.Id))
		}
		o.Mode = string(modes.CurrentModeId)
	}
	if models != nil {
		o.Models = append([]string{}, models.Available...)
		o.Model = models.Current
	}
	if opts != nil {
		o.Options = OptionsOf(opts)
	}
	return o
}

// OptionsOf reads config options (as answered or in a config_option_update).
func OptionsOf(opts []sdk.SessionConfigOption) map[string]Option {
	out := map[string]Option{}
	for _, c := range opts {
		switch {
		case c.Select != nil:
			o := Option{Current: string(c.Select.CurrentValue), Values: []string{}}
			if c.Select.Category != nil {
				o.Category = string(*c.Select.Category)
			}
			if u := c.Select.Options.Ungrouped; u != nil {
				for _, v := range *u {
					o.Values = append(o.Values, string(v.Value))
				}
			}
			if g := c.Select.Options.Grouped; g != nil {
				for _, grp := range *g {
					for _, v := range grp.Options {
						o.Values = append(o.Values, string(v.Value))
					}
				}
			}
			out[string(c.Select.Id)] = o
		case c.Boolean != nil:
			out[string(c.Boolean.Id)] = Option{Current: fmt.Sprint(c.Boolean.CurrentValue), Boolean: true}
		}
	}
	return out
}

// Step is one thing to apply to the agent: its mode, its model, or one
// config option (Key; Boolean when the option is a boolean toggle).
type Step struct {
	Kind    string // "mode", "model", "option"
	Key     string
	Value   string
	Boolean bool
}

// Step kinds.
const (
	StepMode   = "mode"
	StepModel  = "model"
	StepOption = "option"
)

// Reconcile compares the recorded setup with what the agent answered: the
// steps that make the agent match it, and what the agent does not offer
// (one line each, naming it: a warning marker, never silence). Options go in
// key order; mode, then model, then options.
func Reconcile(want *state.Setup, off Offered) (steps []Step, missing []string) {
	if want == nil {
		return nil, nil
	}
	for _, c := range []choice{
		{"mode", want.Mode, off.Modes, off.Mode, StepMode, "the agent offers no modes"},
		{"model", want.Model, off.Models, off.Model, StepModel, "the agent offers no model choice"},
	} {
		step, miss := c.reconcile(off)
		if step != nil {
			steps = append(steps, *step)
		}
		if miss != "" {
			missing = append(missing, miss)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want.Options)) {
		v := want.Options[k]
		o, ok := off.Options[k]
		if b, isBool := BoolValue(v); ok && o.Boolean && isBool {
			v = b
		}
		switch {
		case !ok:
			missing = append(missing, fmt.Sprintf("option %s (it offers %s)", k, list(slices.Sorted(maps.Keys(off.Options)))))
		case o.Boolean && v != "true" && v != "false":
			missing = append(missing, fmt.Sprintf("option %s=%s (it is an on/off option)", k, v))
		case !o.Boolean && !slices.Contains(o.Values, v):
			missing = append(missing, fmt.Sprintf("option %s=%s (it offers %s)", k, v, list(o.Values)))
		case o.Current != v:
			steps = append(steps, Step{Kind: StepOption, Key: k, Value: v, Boolean: o.Boolean})
		}
	}
	return steps, missing
}

// Named joins what Reconcile found missing into one line that names the
// agent where it says what is offered: "model opus (claude offers default,
// sonnet)".
func Named(agent string, missing []string) string {
	if agent == "" {
		agent = "the agent"
	}
	return strings.ReplaceAll(strings.Join(missing, "; "), "(it offers ", "("+agent+" offers ")
}

// BoolValue reads a boolean option's value as written to --set: on, true,
// off or false (any case), as "true" or "false".
func BoolValue(v string) (string, bool) {
	switch strings.ToLower(v) {
	case "on", "true":
		return "true", true
	case "off", "false":
		return "false", true
	}
	return "", false
}

// Runs is want with what the agent does not offer replaced by what it
// runs instead (its current mode, model or option value), and boolean
// options written as true or false: the setup the session records after a
// launch, so status says what the agent runs. A kind the agent answered
// nothing about (no modes, no model choice, no config options) is left out
// on the session's first launch only: a restored agent's answer may just
// leave it out, and the record keeps the person's choice for the next one.
func Runs(want *state.Setup, off Offered, firstLaunch bool) *state.Setup {
	if want == nil {
		return nil
	}
	out := *want
	out.Options = maps.Clone(want.Options)
	out.Mode = choice{"mode", want.Mode, off.Modes, off.Mode, StepMode, ""}.runs(off, firstLaunch)
	out.Model = choice{"model", want.Model, off.Models, off.Model, StepModel, ""}.runs(off, firstLaunch)
	for k, v := range want.Options {
		o, ok := off.Options[k]
		b, isBool := BoolValue(v)
		switch {
		case off.Options == nil && !firstLaunch:
		case !ok:
			delete(out.Options, k)
		case o.Boolean && isBool:
			out.Options[k] = b
		case o.Boolean || !slices.Contains(o.Values, v):
			out.Options[k] = o.Current
		}
	}
	if len(out.Options) == 0 {
		out.Options = nil
	}
	return orNil(&out)
}

// categoryOption is the key of the agent's select option of category cat.
func categoryOption(off Offered, cat string) (string, bool) {
	for _, k := range slices.Sorted(maps.Keys(off.Options)) {
		if o := off.Options[k]; o.Category == cat && !o.Boolean {
			return k, true
		}
	}
	return "", false
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// Reported is the recorded setup after the agent reported a change itself
// (current_mode_update, config_option_update): the mode it switched to, the
// options the record already names at their new values. Options the record
// does not name stay the agent's own defaults; changed says whether the
// record changes.
func Reported(rec *state.Setup, mode string, opts map[string]Option) (next *state.Setup, changed bool) {
	c := Change{Mode: mode}
	if rec != nil {
		for k, v := range rec.Options {
			if o, ok := opts[k]; ok && o.Current != v {
				if c.Options == nil {
					c.Options = map[string]string{}
				}
				c.Options[k] = o.Current
			}
		}
	}
	next = Apply(rec, c)
	return next, !Equal(rec, next)
}

// runs is the value the agent runs for c: c's own when it offers it, else
// its current one; when it offers no such choice, "" on the first launch
// and c's own on a restore (see Runs).
func (c choice) runs(off Offered, firstLaunch bool) string {
	if c.want == "" {
		return ""
	}
	offered, current := c.offered, c.current
	key, byOption := categoryOption(off, c.category)
	switch {
	case c.offered == nil && byOption:
		offered, current = off.Options[key].Values, off.Options[key].Current
	case c.offered == nil && !firstLaunch:
		return c.want
	}
	if slices.Contains(offered, c.want) {
		return c.want
	}
	return current
}

// choice is the session's mode or model against what the agent offers.
type choice struct {
	category, want string
	offered        []string // nil: the agent offers no such list
	current        string
	kind           string // StepMode or StepModel
	none           string // why it is missing when nothing is offered
}

// reconcile is the step that applies c, or why it cannot be applied. An
// agent that offers the choice only as a config option of its category
// (OpenCode's modes, Codex's models) gets it through that option.
func (c choice) reconcile(off Offered) (*Step, string) {
	if c.want == "" {
		return nil, ""
	}
	key, byOption := categoryOption(off, c.category)
	offered, current, step := c.offered, c.current, Step{Kind: c.kind, Value: c.want}
	switch {
	case c.offered == nil && byOption:
		o := off.Options[key]
		offered, current, step = o.Values, o.Current, Step{Kind: StepOption, Key: key, Value: c.want}
	case c.offered == nil:
		return nil, fmt.Sprintf("%s %s (%s)", c.category, c.want, c.none)
	}
	switch {
	case !slices.Contains(offered, c.want):
		return nil, fmt.Sprintf("%s %s (it offers %s)", c.category, c.want, list(offered))
	case current != c.want:
		return &step, ""
	}
	return nil, ""
}

// MissingSummary is the one sentence that says which ${VAR} references had
// no variable set: whole whatever their number or length (a marker's summary
// is bounded, and a cut one would lose the advice), naming as many as fit
// in a few hundred bytes and counting the rest.
func MissingSummary(missing []string) string {
	const room = 600
	names, shown := "", 0
	for _, name := range missing {
		ref := "${" + history.Clip(name, 80) + "}"
		if shown > 0 && len(names)+len(ref)+2 > room {
			break
		}
		if shown > 0 {
			names += ", "
		}
		names += ref
		shown++
	}
	if rest := len(missing) - shown; rest > 0 {
		names += fmt.Sprintf(" and %d more", rest)
	}
	what := "1 variable is"
	if len(missing) != 1 {
		what = fmt.Sprintf("%d variables are", len(missing))
	}
	return "MCP servers: " + what + " not set in kandev's environment (" + names + "); passed empty to the agent: set them and resume to pass them."
}
