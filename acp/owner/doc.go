// Package owner is the life of a session's owner, the one process that
// runs a session's agent: only one owner per session, because the owner
// (run, owner.go) takes the session's owner lock before it reads the record
// and releases it when it returns. Dial (reach.go) is the package's one
// entry point for commands: DecideReach chooses where the owner runs (in
// this process, a detached owner it starts, or a live owner it joins), and
// the command sees the same events, asks and exit codes wherever it runs.
// The owner itself follows a pure plan (plan.go, NewPlan) of what to
// repair, pause, continue or re-send, and an executor carries it out
// (owner.go: the lifecycle; record.go: the writes; restore.go; turn.go;
// permissions.go). Around it: prompts handed to a live owner through its
// inbox (deliver.go, keyed.go, inbox.go), an owner that lingers (live.go,
// pool.go) or runs detached (detach.go). The rules for closing a turn an
// owner died in (repair.go) and finishing a rewind left pending (rewind.go)
// are here because an owner applies them when it starts; the repair, rewind
// and fork commands are package acp/surgery. It talks to the agent through
// package acp.
package owner
