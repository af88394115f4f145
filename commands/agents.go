package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kandev/kandev/acp"
)

// agentsCmd is kandev agents.
type agentsCmd struct {
	Probe bool `help:"Launch each installed agent and report its advertised capabilities (waiting [agent] handshake_timeout_seconds for each)."`
}

// Help shows an example.
func (c *agentsCmd) Help() string { return "Example:\n  kandev agents --probe" }

type agentRow struct {
	Name         string          `json:"name"`
	Command      []string        `json:"command"`
	Installed    bool            `json:"installed"`
	Default      bool            `json:"default"`
	InstallHint  string          `json:"install_hint"`
	NativeResume bool            `json:"native_resume"`
	HistoryInj   bool            `json:"history_injection"`
	ResumeFlag   []string        `json:"resume_flag,omitempty"`
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	ProbeError   string          `json:"probe_error,omitempty"`
}

// Run lists the profiles.
func (c *agentsCmd) Run(env *Env) error {
	h, err := env.Home()
	if err != nil {
		return err
	}
	cfg, err := env.Config()
	if err != nil {
		return err
	}
	def, _ := acp.DefaultAgent(cfg)
	var rows []agentRow
	for _, p := range acp.Profiles(cfg) {
		r := agentRow{Name: p.Name, Command: p.Command, Installed: p.Installed(), Default: p.Name == def, InstallHint: p.InstallHint,
			NativeResume: p.NativeResume, HistoryInj: p.HistoryInjection, ResumeFlag: p.ResumeFlag}
		if c.Probe && r.Installed {
			caps, err := acp.ProbeWithin(env.Ctx, p, h.Dir, time.Duration(cfg.HandshakeTimeoutSeconds())*time.Second)
			if err != nil {
				r.ProbeError = acp.DescribeError(err) // an agent's JSON-RPC error as one readable line
			} else {
				r.Capabilities = caps
			}
		}
		rows = append(rows, r)
	}
	env.Out.Object(agentsOutput{Agents: rows}, func(w io.Writer) {
		var t table
		t.add("NAME", "INSTALLED", "COMMAND", "NOTES")
		for _, r := range rows {
			note := ""
			switch {
			case !r.Installed:
				note = "install: " + r.InstallHint
			case r.ProbeError != "":
				note = "probe failed: " + r.ProbeError
			case r.Capabilities != nil:
				note = capsSummary(r.Capabilities)
			}
			if r.Default {
				note = strings.TrimSuffix("default; "+note, "; ")
			}
			t.add(r.Name, strconv.FormatBool(r.Installed), strings.Join(r.Command, " "), note)
		}
		t.write(w)
	})
	return nil
}

func capsSummary(b json.RawMessage) string {
	c := acp.CapabilitiesFromJSON(b)
	parts := []string{}
	if c.Agent != "" {
		parts = append(parts, c.Agent)
	}
	parts = append(parts, fmt.Sprintf("resume=%v load=%v", c.Resume, c.Load))
	return strings.Join(parts, ", ")
}

var errorsIs = errors.Is
