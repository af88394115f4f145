package setup

import (
	"errors"
	"reflect"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/state"
)

func TestFromACP(t *testing.T) {
	stdio := sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "notes", Command: "/bin/notes", Args: []string{"-f", "x"},
		Env: []sdk.EnvVariable{{Name: "TOKEN", Value: "${NOTES_TOKEN}"}}}}
	http := sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: "web", Type: "http", Url: "http://127.0.0.1:1/mcp",
		Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer ${WEB_TOKEN}"}}}}
	secret := sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "leaky", Command: "x",
		Env: []sdk.EnvVariable{{Name: "GITHUB_TOKEN", Value: "ghp_0123456789abcdefghijABCDEFGHIJ012345"}}}}
	again := sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: "notes", Command: "/bin/other"}}
	tests := []struct {
		name    string
		in      []sdk.McpServer
		want    []state.MCPServer
		refused bool
	}{
		{"none", nil, nil, false},
		{"stdio and http, references kept as written", []sdk.McpServer{stdio, http}, []state.MCPServer{
			{Name: "notes", Command: "/bin/notes", Args: []string{"-f", "x"}, Env: map[string]string{"TOKEN": "${NOTES_TOKEN}"}},
			{Name: "web", Type: "http", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer ${WEB_TOKEN}"}},
		}, false},
		{"a later server of the same name wins", []sdk.McpServer{stdio, again}, []state.MCPServer{{Name: "notes", Command: "/bin/other"}}, false},
		{"a literal secret is refused", []sdk.McpServer{stdio, secret}, nil, true},
		{"no name", []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Command: "x"}}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromACP(tt.in, "session/new")
			if tt.refused {
				if !errors.Is(err, ErrBadSetup) {
					t.Fatalf("err = %v, want a refusal", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestMergeServers(t *testing.T) {
	a, b, b2, c := state.MCPServer{Name: "a"}, state.MCPServer{Name: "b"}, state.MCPServer{Name: "b", Command: "new"}, state.MCPServer{Name: "c"}
	rec := []state.MCPServer{a, b}
	got := MergeServers(rec, []state.MCPServer{b2, c})
	if want := []state.MCPServer{a, b2, c}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if rec[1].Command != "" {
		t.Fatal("MergeServers changed its input")
	}
}
