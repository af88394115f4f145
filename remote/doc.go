// Package remote moves sessions between machines through a git remote the
// project already has. A session travels as the ref refs/kandev/sessions/<id>:
// a chain of commits, each one a push, whose tree holds the record and the
// event log in append-only chunks, so a push sends only what was appended.
// One machine at a time runs a session's turns: it holds the claim
// refs/kandev/owners/<id>, taken and renewed by compare-and-swap ref updates
// (a git server updates a ref only if it still has the value the pusher
// expected), and every push of a session carries its claim in the same atomic
// update, so a machine whose claim was taken over cannot push again (fencing).
//
// The project's branches, work tree and index are never touched: objects are
// built in a private object store under $KANDEV_HOME/sync and sent from there.
//
// Whoever can push refs/kandev/* is not the person at this machine, so what
// a pull takes is data: it is checked whole before anything is written
// (pulled.go), this machine's own fields are never taken from it, and the MCP
// servers it brings wait for kandev trust. Every conversation with the remote
// has a deadline (deadline.go), and a claim cannot be pinned (Claim.Bounded).
//
// Tree of a session commit:
//
//	kandev-session.json  {format, id, log_bytes, log_lines, origin{url, branch, rel}}
//	record.json          the session record as this machine had it
//	log/b0000/c0000000001.jsonl ...  log lines, one chunk per push, named by first line
//
// A claim is a commit without parents and with the empty tree; its message
// is the claim as JSON ({machine, pid, generation, expires_at, released}).
package remote
