package setup

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxServerNameBytes bounds an MCP server's name: it is shown on one line
// by status, trust and pull, and names a server, not a document.
const MaxServerNameBytes = 64

// CheckName refuses an MCP server name that is empty, longer than
// MaxServerNameBytes, not UTF-8, or holds a control character or a path
// separator: each reaches a terminal, a log line and the agent's argv.
// from says where the name was written. The error shows only the start of
// a long name.
func CheckName(name, from string) error {
	why := ""
	switch {
	case name == "":
		why = "is empty"
	case len(name) > MaxServerNameBytes:
		why = fmt.Sprintf("is %d bytes, over the limit of %d", len(name), MaxServerNameBytes)
	case !utf8.ValidString(name):
		why = "is not valid UTF-8"
	case strings.ContainsAny(name, `/\`):
		why = "holds a path separator (/ or \\)"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		why = "holds a control character"
	}
	if why == "" {
		return nil
	}
	shown := name
	if len(shown) > 32 {
		shown = strings.ToValidUTF8(shown[:32], "") + "..."
	}
	return bad("%s: the MCP server name %s %s: name it with at most %d bytes of letters, digits, '-', '_' or '.'", from, strconv.QuoteToASCII(shown), why, MaxServerNameBytes)
}
