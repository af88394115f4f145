// Package state is the store: everything kandev keeps under $KANDEV_HOME
// about a session besides its event log (package eventlog): the session
// record, the owner lock, the attach lease and the inbox of queued inputs.
// Every file it creates is 0600 and every directory 0700, and none is ever
// reached through a symbolic link; a record is replaced atomically, so a
// crash at any instant leaves the old or the new one, never a mix.
//
// # On-disk format
//
// A home (Home, OpenHome) holds, besides config.toml (package config):
//
//	format                      the home's format version: one number and a newline
//	start-keys.lock             orders kandev start --key (empty; flock)
//	warm.lock                   orders owners that start to linger (empty; flock)
//	sessions/ID.json            the session record
//	sessions/ID.jsonl           the event log (package eventlog)
//	sessions/ID.inbox.jsonl     queued inputs, one JSON object a line
//	sessions/ID.lease.json      the attach lease
//	sessions/ID.owner.lock      held by the session's owner for its whole life
//	sessions/ID.record.lock     guards read-modify-write of record, lease and inbox
//	sessions/ID.agent.lock      held by the agent's supervisor while the agent lives
//	sessions/ID.owner.out       a detached owner's stdout and stderr
//	sessions/ID.prompt          a prompt handed to a detached owner as typed
//	sessions/ID.digest          a cache of recap's digest, rebuilt when stale
//
// The record (Session) is one indented JSON object with a format field; it is
// written to a temporary file in the same directory, fsync'd and renamed over
// the old one, and the directory is fsync'd. A record field this kandev does
// not know is kept and written back unchanged; a record or a home of a newer
// format is refused (NewerFormatError), never half-read, and one of an older
// format is read as it is and upgraded the first time it is written.
//
// The inbox (Input) is append-only but for one change: a served prompt's
// line is overwritten in place, same length, without its text. The lease
// (Lease) is a small JSON object replaced atomically; it expires on its own.
// The lock files are empty: a lock is the flock on the file, released by the
// kernel when its holder dies, so a lock is never stale. A command that
// changes a session without running its agent holds its owner lock while it
// does (Held, Home.Hold): the record it changes and the events it appends
// never interleave with an owner's.
//
// docs/event-log.md lists every field of each file.
package state
