// Command mcpnotes is a small MCP server on stdio, built with the official
// MCP Go SDK, for end-to-end tests of the MCP servers kandev passes to an
// agent. It has one tool, "append", that appends its text argument (one
// line) to the file named by -file or, when -file is empty, by the
// environment variable MCPNOTES_FILE, and answers "appended: TEXT". When
// the environment variable MCPNOTES_TOKEN is set, the answer also says
// whether it equals the content of -want-token-file (so a test can see a
// ${VAR} reference was expanded for the agent without the secret being
// written anywhere kandev keeps).
//
// Build it with `go build -o BIN ../testdata/mcpnotes` (`go ./...` skips testdata).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type appendArgs struct {
	Text string `json:"text" jsonschema:"the line to append"`
}

func main() {
	file := flag.String("file", "", "the file to append to (default: $MCPNOTES_FILE)")
	wantFile := flag.String("want-token-file", "", "a file holding the token MCPNOTES_TOKEN should hold")
	flag.Parse()
	path := *file
	if path == "" {
		path = os.Getenv("MCPNOTES_FILE")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpnotes", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "append", Description: "Append a line of text to the notes file"},
		func(ctx context.Context, req *mcp.CallToolRequest, in appendArgs) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				return nil, nil, err
			}
			defer f.Close()
			if _, err := fmt.Fprintln(f, in.Text); err != nil {
				return nil, nil, err
			}
			text := "appended: " + in.Text
			if tok, ok := os.LookupEnv("MCPNOTES_TOKEN"); ok {
				want, _ := os.ReadFile(*wantFile)
				text += fmt.Sprintf(" (token matches: %v)", tok != "" && tok == strings.TrimSpace(string(want)))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
