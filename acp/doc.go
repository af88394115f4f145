// Package acp talks ACP to one agent process for kandev: it launches the
// agent (under a supervisor on unix, in a Job Object on Windows, so the
// agent's whole process tree ends with it), speaks the Agent Client
// Protocol to it through github.com/coder/acp-go-sdk (Conn), answers its
// file requests inside the session's directory, and turns what it sends
// into event-log events. Its policy is pure: the restore ladder
// (NextRestoreStep) and the error classes it reads (Classify) are functions
// of the agent's capabilities and answers. A session's owner, which runs
// the agent for a session, is package acp/owner; acp does not import it.
package acp
