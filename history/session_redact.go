package history

import (
	"slices"
	"strings"

	"github.com/kandev/kandev/state"
)

// RedactSession returns a copy of s with its display text redacted: the title
// and the initial prompt (taken from the user's prompt), the error message and
// the pause reason (which may quote an agent's stderr), the agent command's
// arguments (a secret value, or the value after a flag that names a secret)
// and the string values of the agent's capabilities. Ids, paths, states and
// times are left alone. Records are written before redaction reaches them in
// some places, so everything that prints or exports a record goes through this.
func RedactSession(s state.Session) state.Session {
	s.Title = Redact(s.Title)
	s.InitialPrompt = Redact(s.InitialPrompt)
	s.ErrorMessage = Redact(s.ErrorMessage)
	if s.Pause != nil {
		p := *s.Pause
		p.Reason = Redact(p.Reason)
		s.Pause = &p
	}
	s.Capabilities = redactJSON(s.Capabilities)
	if len(s.AgentCommand) > 0 {
		cmd := slices.Clone(s.AgentCommand)
		for i, arg := range cmd {
			if i > 0 && isSecretFlag(cmd[i-1]) && !strings.Contains(cmd[i-1], "=") && !isPlaceholder(arg) {
				cmd[i] = Redacted
				continue
			}
			cmd[i] = Redact(arg)
		}
		s.AgentCommand = cmd
	}
	return s
}

// isSecretFlag reports whether arg is a flag like --api-key or -token.
func isSecretFlag(arg string) bool {
	name := strings.TrimLeft(arg, "-")
	return len(name) < len(arg) && isSecretKey(name)
}
