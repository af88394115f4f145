package editor

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/acp"
)

// promptText is the text kandev sends and logs for a prompt: text blocks as
// they are, an embedded text resource as its URI and contents, a resource
// link as its URI. Images and audio have no place in a text log and are not
// advertised, so an editor does not send them.
func promptText(blocks []sdk.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, "<"+r.Uri+">\n"+r.Text)
		case b.ResourceLink != nil:
			parts = append(parts, "<"+b.ResourceLink.Uri+">")
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n\n"))
}

// probeTimeout bounds launching an agent only to read its capabilities.
const probeTimeout = 15 * time.Second

// promptCapabilities are the prompt capabilities of agent, as far as kandev
// can carry them: embedded context when the agent takes it (kandev sends it
// as text either way); never images or audio. They come from the newest
// session of that agent in the home (its recorded initialize answer), else
// from launching the agent once; an agent that cannot be asked gets none.
// The agent's MCP capabilities come with them.
func promptCapabilities(ctx context.Context, opts Options, agent string) (sdk.PromptCapabilities, sdk.McpCapabilities) {
	var caps sdk.InitializeResponse
	if raw := recordedCapabilities(opts, agent); raw != nil {
		_ = json.Unmarshal(raw, &caps)
	} else if p, err := acp.LookupProfile(opts.Config, agent); err == nil {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		raw, err := acp.Probe(pctx, p, opts.Home.Dir)
		cancel()
		if err == nil {
			_ = json.Unmarshal(raw, &caps)
		}
	}
	// The MCP transports the agent takes (stdio always) are the editor's to
	// use: kandev records the servers and passes them on as they are.
	return sdk.PromptCapabilities{EmbeddedContext: caps.AgentCapabilities.PromptCapabilities.EmbeddedContext}, caps.AgentCapabilities.McpCapabilities
}

// recordedCapabilities is the initialize answer the agent gave in its
// newest session of the home, nil when it never ran.
func recordedCapabilities(opts Options, agent string) json.RawMessage {
	all, err := opts.Home.ListSessions()
	if err != nil {
		return nil
	}
	for _, s := range all { // newest activity first
		if s.Agent == agent && len(s.Capabilities) > 0 {
			return s.Capabilities
		}
	}
	return nil
}
