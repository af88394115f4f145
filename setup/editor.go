package setup

import (
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/state"
)

// FromACP reads the mcpServers an editor gives in session/new, load or
// resume as servers to record, each checked as a --mcp file's are (Check):
// a literal secret in an env or header value is refused, with advice to
// write a ${VAR} reference that kandev expands from its own environment.
// from names the request, for the error.
func FromACP(servers []sdk.McpServer, from string) ([]state.MCPServer, error) {
	var out []state.MCPServer
	for _, m := range servers {
		var srv state.MCPServer
		switch {
		case m.Stdio != nil:
			srv = state.MCPServer{Name: m.Stdio.Name, Command: m.Stdio.Command, Args: slices.Clone(m.Stdio.Args)}
			for _, e := range m.Stdio.Env {
				if srv.Env == nil {
					srv.Env = map[string]string{}
				}
				srv.Env[e.Name] = e.Value
			}
		case m.Http != nil:
			srv = state.MCPServer{Name: m.Http.Name, Type: "http", URL: m.Http.Url, Headers: headers(m.Http.Headers)}
		case m.Sse != nil:
			srv = state.MCPServer{Name: m.Sse.Name, Type: "sse", URL: m.Sse.Url, Headers: headers(m.Sse.Headers)}
		default:
			return nil, bad("%s: an MCP server that is neither stdio, http nor sse", from)
		}
		if err := Check(srv, from); err != nil {
			return nil, err
		}
		out = MergeServers(out, []state.MCPServer{srv})
	}
	return out, nil
}

func headers(hs []sdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}

// MergeServers is rec with more added in order, a server of more replacing
// rec's of the same name in place. Neither list is changed.
func MergeServers(rec, more []state.MCPServer) []state.MCPServer {
	out := slices.Clone(rec)
	for _, srv := range more {
		if i := slices.IndexFunc(out, func(s state.MCPServer) bool { return s.Name == srv.Name }); i >= 0 {
			out[i] = srv
			continue
		}
		out = append(out, srv)
	}
	return out
}
