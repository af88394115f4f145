package acp

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/kandev/kandev/config"
)

// Profile says how to launch and restore one agent.
type Profile struct {
	Name    string            `json:"name"`
	Command []string          `json:"command"`
	Env     map[string]string `json:"env,omitempty"`
	// NativeResume false forces session/resume and session/load off.
	NativeResume bool `json:"native_resume"`
	// HistoryInjection true always sends the resume context after a restart.
	HistoryInjection bool `json:"history_injection"`
	// ResumeFlag is appended to Command with {token} replaced on relaunch
	// (agents that resume through a command-line flag instead of ACP).
	ResumeFlag  []string `json:"resume_flag,omitempty"`
	InstallHint string   `json:"install_hint,omitempty"`
	BuiltIn     bool     `json:"built_in"`
	// ExitOnEOF false says the agent keeps running when its stdin closes:
	// shutting it down signals it at once instead of after the grace.
	ExitOnEOF bool `json:"exit_on_eof"`
}

// ignoresEOF are the built-in agents that do not exit when their stdin
// closes (measured: claude-agent-acp and codex-acp wait for a signal).
var ignoresEOF = map[string]bool{"claude": true, "codex": true}

// DemoProfile is the default agent: kandev's own demo agent.
const DemoProfile = "demo"

// builtins are the agents kandev knows. Commands are the ACP entry points
// those agents ship today; each is a binary on PATH so that nothing is
// downloaded at launch.
func builtins() map[string]Profile {
	return map[string]Profile{
		"demo": {Command: []string{"{kandev}", "demo-agent"}, NativeResume: true,
			InstallHint: "built in: nothing to install"},
		"claude": {Command: []string{"claude-agent-acp"}, NativeResume: true,
			InstallHint: "npm install -g @agentclientprotocol/claude-agent-acp (then set ANTHROPIC_API_KEY or log in with `claude`)"},
		"codex": {Command: []string{"codex-acp"}, NativeResume: true,
			InstallHint: "npm install -g @agentclientprotocol/codex-acp (set OPENAI_API_KEY or log in with `codex`)"},
		"copilot": {Command: []string{"copilot", "--acp"}, NativeResume: true,
			InstallHint: "npm install -g @github/copilot (then `copilot` once to log in)"},
		"gemini": {Command: []string{"gemini", "--acp"}, NativeResume: true,
			InstallHint: "npm install -g @google/gemini-cli (set GEMINI_API_KEY or log in with `gemini`)"},
		"opencode": {Command: []string{"opencode", "acp"}, NativeResume: true,
			InstallHint: "npm install -g opencode-ai"},
		"auggie": {Command: []string{"auggie", "--acp"}, NativeResume: true,
			InstallHint: "npm install -g @augmentcode/auggie (then `auggie login`)"},
		"amp": {Command: []string{"amp-acp"}, NativeResume: true, HistoryInjection: true,
			InstallHint: "Amp publishes no ACP adapter on npm (its CLI, @sourcegraph/amp, has no ACP mode): set [agents.amp] command to an adapter that speaks ACP"},
	}
}

// Profiles returns the built-in profiles overlaid with the config's
// [agents.NAME] tables, sorted by name.
func Profiles(cfg *config.Config) []Profile {
	all := builtins()
	for name, p := range all {
		p.Name, p.BuiltIn, p.ExitOnEOF = name, true, !ignoresEOF[name]
		all[name] = p
	}
	for name, c := range cfg.Agents {
		p, ok := all[name]
		if !ok {
			p = Profile{Name: name, NativeResume: true, ExitOnEOF: true, InstallHint: "check the command of [agents." + name + "] in your config"}
		}
		if len(c.Command) > 0 {
			p.Command = c.Command
		}
		if c.Env != nil {
			p.Env = c.Env
		}
		if c.NativeResume != nil {
			p.NativeResume = *c.NativeResume
		}
		if c.HistoryInjection != nil {
			p.HistoryInjection = *c.HistoryInjection
		}
		if c.ResumeFlag != nil {
			p.ResumeFlag = c.ResumeFlag
		}
		if c.InstallHint != "" {
			p.InstallHint = c.InstallHint
		}
		if c.ExitOnEOF != nil {
			p.ExitOnEOF = *c.ExitOnEOF
		}
		all[name] = p
	}
	out := make([]Profile, 0, len(all))
	for _, p := range all {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DefaultAgent is the agent a session gets when none is named: the config's
// default_agent, else the demo agent (chosen says the config named it).
func DefaultAgent(cfg *config.Config) (name string, chosen bool) {
	if cfg.DefaultAgent != "" {
		return cfg.DefaultAgent, true
	}
	return DemoProfile, false
}

// RealAgents are the names of the installed profiles other than the demo
// agent, in the order of profiles.
func RealAgents(profiles []Profile, installed func(Profile) bool) []string {
	var out []string
	for _, p := range profiles {
		if p.Name != DemoProfile && installed(p) {
			out = append(out, p.Name)
		}
	}
	return out
}

// DemoDefaultNotice is the one line that tells a user whose config names no
// default agent that the demo agent runs although real ones are installed,
// and how to choose one; "" when no real agent is installed.
func DemoDefaultNotice(real []string) string {
	if len(real) == 0 {
		return ""
	}
	return fmt.Sprintf("using the demo agent (no default_agent in config.toml); installed: %s; choose one with --agent %s or default_agent = %q in config.toml",
		strings.Join(real, ", "), real[0], real[0])
}

// ErrUnknownAgent is returned for an agent name with no profile.
var ErrUnknownAgent = fmt.Errorf("unknown agent")

// LookupProfile finds the profile called name.
func LookupProfile(cfg *config.Config, name string) (Profile, error) {
	for _, p := range Profiles(cfg) {
		if p.Name == name {
			return p, nil
		}
	}
	var names []string
	for _, p := range Profiles(cfg) {
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("%w %q: known agents are %s (or add [agents.%s] to the config)", ErrUnknownAgent, name, strings.Join(names, ", "), name)
}

// ResolvedCommand is the command line with {kandev} replaced by this
// executable, so the demo agent runs from the same binary.
func (p Profile) ResolvedCommand() []string {
	out := make([]string, len(p.Command))
	for i, a := range p.Command {
		if a == "{kandev}" {
			if exe, err := os.Executable(); err == nil {
				a = exe
			} else {
				a = "kandev"
			}
		}
		out[i] = a
	}
	return out
}

// Installed reports whether the profile's program can be found.
func (p Profile) Installed() bool {
	cmd := p.ResolvedCommand()
	if len(cmd) == 0 {
		return false
	}
	_, err := exec.LookPath(cmd[0])
	return err == nil
}

// StopGrace is how long an agent being shut down gets to exit on its own
// once its stdin is closed: none for one that ignores EOF, which would only
// make the owner wait the whole grace before signalling it.
func (p Profile) StopGrace() time.Duration {
	if !p.ExitOnEOF {
		return 0
	}
	return 500 * time.Millisecond
}
