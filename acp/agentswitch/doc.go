// Package agentswitch moves a session from one agent to another (kandev
// switch, and an editor's _kandev/agent option). The session stays one
// conversation: its record names the new agent, its log gets an
// agent_switched event and a marker, and the new agent is restored at its
// next turn by a fresh agent session that carries the conversation so far
// as its resume context, in the same worktree.
//
// It guarantees:
//   - a switch is decided once, from data (Decide, with its table test):
//     an unknown or uninstalled agent, a running turn and a finished session
//     are refused, the agent it already runs changes nothing;
//   - the record is written before the event (under the owner lock, after a
//     travelling session's claim), so a crash between the two leaves the
//     session on one agent or the other, never on none, and the next command
//     that owns it writes the event once (owner.FinishSwitch);
//   - the setup is kept: the new agent's first start applies what it offers
//     of it (model, mode, options, MCP servers) and names what it does not
//     in a setup_not_offered marker.
package agentswitch
