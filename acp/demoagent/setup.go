package demoagent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"
)

// The demo agent's setup: two modes, two models and the config options
// "effort" and "fast". A session's choices are saved with it, so
// session/load and session/resume bring them back; a session/new starts at
// the defaults. It offers its setup as ACP 1.x agents do: the model as a
// config option of category "model", effort of category "thought_level",
// and a boolean option "fast"; with Options.LegacyModels as agents did
// before: a models list (legacy.go) and effort alone.
var (
	demoModes  = []string{"ask", "code"}
	demoModels = []string{"demo-small", "demo-large"}
	effortVals = []string{"low", "high"}
)

const (
	defaultMode   = "ask"
	defaultModel  = "demo-small"
	optionEffort  = "effort"
	defaultEffort = "low"
	optionModel   = "model"
	optionFast    = "fast"
)

// setupOf is the session's mode, model and options with defaults filled in.
func setupOf(f *sessionFile) (mode, model string, opts map[string]string) {
	mode, model = f.Mode, f.Model
	if mode == "" {
		mode = defaultMode
	}
	if model == "" {
		model = defaultModel
	}
	opts = map[string]string{optionEffort: defaultEffort}
	maps.Copy(opts, f.Options)
	return mode, model, opts
}

// setupLine is "mode: M, model: M, options: k=v", the line recall and
// /setup answer with.
func setupLine(f *sessionFile) string {
	mode, model, opts := setupOf(f)
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		kv = append(kv, k+"="+opts[k])
	}
	return fmt.Sprintf("mode: %s, model: %s, options: %s", mode, model, strings.Join(kv, " "))
}

// atDefaults reports whether nothing of the session's setup was changed.
func atDefaults(f *sessionFile) bool {
	mode, model, opts := setupOf(f)
	return mode == defaultMode && model == defaultModel && opts[optionEffort] == defaultEffort && len(opts) == 1
}

// setupState is what session/new, load and resume answer about the setup
// (with LegacyModels the model list is added on the way out, legacy.go).
func (a *agent) setupState(f *sessionFile) (*acp.SessionModeState, []acp.SessionConfigOption) {
	mode, _, _ := setupOf(f)
	modes := &acp.SessionModeState{CurrentModeId: acp.SessionModeId(mode)}
	for _, m := range demoModes {
		modes.AvailableModes = append(modes.AvailableModes, acp.SessionMode{Id: acp.SessionModeId(m), Name: m})
	}
	return modes, a.configOptions(f)
}

// configOptions is the session's config options: the model (category
// "model"), effort and fast (a boolean); with LegacyModels effort alone.
func (a *agent) configOptions(f *sessionFile) []acp.SessionConfigOption {
	_, model, opts := setupOf(f)
	if a.opts.LegacyModels {
		return []acp.SessionConfigOption{selectOption(optionEffort, "Reasoning effort", "", effortVals, opts[optionEffort])}
	}
	fast := acp.NewSessionConfigOptionBoolean(opts[optionFast] == "true")
	fast.Boolean.Id, fast.Boolean.Name = optionFast, "Fast mode"
	if !a.booleans.Load() { // a client that did not declare booleans gets a select
		fast = selectOption(optionFast, "Fast mode", "", []string{"true", "false"}, cmp.Or(opts[optionFast], "false"))
	}
	return []acp.SessionConfigOption{
		selectOption(optionModel, "Model", acp.SessionConfigOptionCategoryModel, demoModels, model),
		selectOption(optionEffort, "Reasoning effort", acp.SessionConfigOptionCategoryThoughtLevel, effortVals, opts[optionEffort]),
		fast,
	}
}

func selectOption(id, name string, category acp.SessionConfigOptionCategory, values []string, current string) acp.SessionConfigOption {
	var vals acp.SessionConfigSelectOptionsUngrouped
	for _, v := range values {
		vals = append(vals, acp.SessionConfigSelectOption{Name: v, Value: acp.SessionConfigValueId(v)})
	}
	o := acp.NewSessionConfigOptionSelect(acp.SessionConfigValueId(current), acp.SessionConfigSelectOptions{Ungrouped: &vals})
	o.Select.Id, o.Select.Name = acp.SessionConfigId(id), name
	if category != "" {
		o.Select.Category = &category
	}
	return o
}

// noteClientSession reads off a raw initialize request whether the client
// declared boolean config options (session.configOptions.boolean), which
// the SDK's types drop.
func (a *agent) noteClientSession(line []byte) {
	if gjson.GetBytes(line, "method").Str == "initialize" {
		a.booleans.Store(gjson.GetBytes(line, "params.clientCapabilities.session.configOptions.boolean").IsObject())
		a.subagents.Store(gjson.GetBytes(line, "params.clientCapabilities.subagents").IsObject())
	}
}

func invalidParams(msg string) error { return acp.NewInvalidParams(map[string]any{"error": msg}) }

// changeSetup applies fn to a session's file under its turn lock and saves it.
func (a *agent) changeSetup(id string, fn func(f *sessionFile) error) error {
	s := a.lookup(id)
	if s == nil {
		return errNoSession(id)
	}
	s.turn.Lock()
	defer s.turn.Unlock()
	if err := fn(&s.file); err != nil {
		return err
	}
	if err := save(a.opts.Dir, &s.file); err != nil {
		return internalError(err)
	}
	return nil
}

// SetSessionMode implements acp.Agent: ask or code.
func (a *agent) SetSessionMode(_ context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, a.changeSetup(string(p.SessionId), func(f *sessionFile) error {
		if !slices.Contains(demoModes, string(p.ModeId)) {
			return invalidParams(fmt.Sprintf("unknown mode %q (modes: %s)", p.ModeId, strings.Join(demoModes, ", ")))
		}
		f.Mode = string(p.ModeId)
		return nil
	})
}

// SetSessionConfigOption implements acp.Agent: effort = low or high, and
// (but with LegacyModels) model = demo-small or demo-large and fast = a
// boolean.
func (a *agent) SetSessionConfigOption(_ context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	var id acp.SessionId
	switch {
	case p.ValueId != nil:
		id = p.ValueId.SessionId
	case p.Boolean != nil:
		id = p.Boolean.SessionId
	default:
		return acp.SetSessionConfigOptionResponse{}, invalidParams("no option to set")
	}
	var opts []acp.SessionConfigOption
	err := a.changeSetup(string(id), func(f *sessionFile) error {
		if f.Options == nil {
			f.Options = map[string]string{}
		}
		switch {
		case p.Boolean != nil && !a.opts.LegacyModels && p.Boolean.ConfigId == optionFast:
			f.Options[optionFast] = fmt.Sprint(p.Boolean.Value)
		case p.ValueId != nil && !a.opts.LegacyModels && p.ValueId.ConfigId == optionFast && (p.ValueId.Value == "true" || p.ValueId.Value == "false"):
			f.Options[optionFast] = string(p.ValueId.Value)
		case p.ValueId != nil && p.ValueId.ConfigId == optionEffort && slices.Contains(effortVals, string(p.ValueId.Value)):
			f.Options[optionEffort] = string(p.ValueId.Value)
		case p.ValueId != nil && !a.opts.LegacyModels && p.ValueId.ConfigId == optionModel && slices.Contains(demoModels, string(p.ValueId.Value)):
			f.Model = string(p.ValueId.Value)
		case p.ValueId != nil:
			return invalidParams(fmt.Sprintf("unknown option %s=%s (the demo agent has effort = %s)", p.ValueId.ConfigId, p.ValueId.Value, strings.Join(effortVals, " or ")))
		default:
			return invalidParams(fmt.Sprintf("unknown boolean option %s", p.Boolean.ConfigId))
		}
		opts = a.configOptions(f)
		return nil
	})
	if err != nil {
		return acp.SetSessionConfigOptionResponse{}, err
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

// switchMode is the /mode directive: the agent changes its own mode and
// tells the client (current_mode_update), as agents do when a user asks
// them in the conversation.
func (t *turn) switchMode(mode string) error {
	if !slices.Contains(demoModes, mode) {
		return t.message(roleAgent, fmt.Sprintf("I have no mode %s (modes: %s).", mode, strings.Join(demoModes, ", ")))
	}
	t.s.file.Mode = mode
	if err := t.a.send(t.ctx, t.s.file.ID, acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: acp.SessionModeId(mode)}}); err != nil {
		return err
	}
	return t.message(roleAgent, "Switched to mode "+mode+".")
}

// title is the /title TEXT directive: the agent names the session itself
// (session_info_update), as ACP 1.x agents do, and says so.
func (t *turn) title(text string) error {
	u := acp.SessionUpdate{SessionInfoUpdate: &acp.SessionSessionInfoUpdate{SessionUpdate: "session_info_update", Title: &text}}
	if err := t.a.send(t.ctx, t.s.file.ID, u); err != nil {
		return err
	}
	return t.message(roleAgent, "Titled the session: "+text+".")
}

// mcpCallTimeout bounds one MCP server's start, listing and call.
const mcpCallTimeout = 20 * time.Second

// withMCP connects to each stdio MCP server the client gave this session,
// in order, and runs fn on it; servers of other transports are named in
// skipped (the demo agent speaks MCP over stdio only).
func (t *turn) withMCP(fn func(ctx context.Context, name string, c *mcpClient) (bool, error)) (skipped []string, err error) {
	for _, srv := range t.s.mcp {
		if srv.Stdio == nil {
			switch {
			case srv.Http != nil:
				skipped = append(skipped, srv.Http.Name+" (http)")
			case srv.Sse != nil:
				skipped = append(skipped, srv.Sse.Name+" (sse)")
			}
			continue
		}
		done, err := t.callMCP(srv.Stdio, fn)
		if err != nil {
			return skipped, fmt.Errorf("MCP server %s: %w", srv.Stdio.Name, err)
		}
		if done {
			return skipped, nil
		}
	}
	return skipped, nil
}

func (t *turn) callMCP(srv *acp.McpServerStdio, fn func(context.Context, string, *mcpClient) (bool, error)) (bool, error) {
	ctx, cancel := context.WithTimeoutCause(t.ctx, mcpCallTimeout, fmt.Errorf("no answer within %v", mcpCallTimeout))
	defer cancel()
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for _, e := range srv.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Dir = t.s.file.Cwd
	cmd.Stderr = os.Stderr
	c, err := startMCP(ctx, cmd)
	if err != nil {
		return false, err
	}
	defer c.close()
	return fn(ctx, srv.Name, c)
}

// tools is the /tools directive: every tool of every MCP server given.
func (t *turn) tools() error {
	if len(t.s.mcp) == 0 {
		return t.message(roleAgent, "I was given no MCP servers.")
	}
	var names []string
	skipped, err := t.withMCP(func(ctx context.Context, server string, c *mcpClient) (bool, error) {
		list, err := c.listTools(ctx)
		if err != nil {
			return false, err
		}
		for _, tool := range list {
			names = append(names, server+"/"+tool.Name)
		}
		return false, nil
	})
	if err != nil {
		return t.message(roleAgent, "I could not list the MCP tools: "+err.Error())
	}
	msg := "MCP tools: " + strings.Join(names, ", ")
	if len(names) == 0 {
		msg = "MCP tools: none"
	}
	if len(skipped) > 0 {
		msg += " (not connected, I speak MCP over stdio only: " + strings.Join(skipped, ", ") + ")"
	}
	return t.message(roleAgent, msg)
}

// mcpCall is the /mcp TOOL ARGS directive: a tool call that calls TOOL
// (or SERVER/TOOL) of the first server that has it, with ARGS as its JSON
// object arguments, or {"text": ARGS} when ARGS is not a JSON object.
func (t *turn) mcpCall(tool, args string) error {
	server := ""
	if s, name, ok := strings.Cut(tool, "/"); ok {
		server, tool = s, name
	}
	var arguments map[string]any
	if json.Unmarshal([]byte(args), &arguments) != nil {
		arguments = map[string]any{"text": args}
	}
	t.s.file.LastCall++
	id := fmt.Sprintf("call-%d", t.s.file.LastCall)
	raw := map[string]string{"tool": tool, "arguments": args}
	if err := t.emit(t.ctx, entry{Role: roleToolCall, ToolCallID: id, Title: "mcp " + tool, Kind: string(acp.ToolKindOther), Status: string(acp.ToolCallStatusInProgress), RawInput: raw}); err != nil {
		return err
	}
	result, status := "", acp.ToolCallStatusCompleted
	found := false
	_, err := t.withMCP(func(ctx context.Context, name string, c *mcpClient) (bool, error) {
		if server != "" && name != server {
			return false, nil
		}
		list, err := c.listTools(ctx)
		if err != nil {
			return false, err
		}
		if !slices.ContainsFunc(list, func(x mcpTool) bool { return x.Name == tool }) {
			return false, nil
		}
		found = true
		text, isError, err := c.callTool(ctx, tool, arguments)
		if err != nil {
			return true, err
		}
		result = text
		if isError {
			status = acp.ToolCallStatusFailed
		}
		return true, nil
	})
	switch {
	case err != nil:
		result, status = err.Error(), acp.ToolCallStatusFailed
	case !found:
		result, status = "no MCP server I was given has a tool "+tool, acp.ToolCallStatusFailed
	}
	return t.emit(t.ctx, entry{Role: roleToolResult, ToolCallID: id, Status: string(status), Text: result})
}
