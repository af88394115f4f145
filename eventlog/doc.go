// Package eventlog is a session's append-only event log: one JSON Lines file
// per session, written by the session's owner only, read by anyone.
//
// # On-disk format
//
// The log of session ID is $KANDEV_HOME/sessions/ID.jsonl, mode 0600, never
// reached through a symbolic link. Each line is one Event encoded as a JSON
// object and ended by '\n'. Every line carries
//
//	seq         1, 2, 3, ...: the line's place in the log, assigned by Append
//	timestamp   RFC 3339 with nanoseconds, UTC (FormatTime)
//	type        one of the Event* constants (docs/event-log.md lists them)
//	session_id  the session the log belongs to
//
// and the fields of its type (turn_id, content, stop_reason, ...); fields that
// are empty are left out. seq is a whole number from 1 to MaxSeq (2^53-1), so
// that every JSON reader holds it exactly.
//
// # Writing
//
// Open opens a log for appending; only the session's owner does, so seq
// numbers are assigned without gaps. Append writes a batch of events in one
// write(2): when it returns the events are in the kernel and survive the
// process being killed. A batch that cannot be written whole (a full disk) is
// cut back off the file, so the log never keeps a partial line, and its error
// is returned. Sync adds fsync(2), for turn boundaries, markers and state
// changes, which must survive a power loss; AppendSync does both.
//
// # Damage and how readers treat it
//
// A crash in the middle of a write can leave an unterminated last line (a
// torn tail). Readers skip it and report its length (ReadReport.TornBytes);
// Open, and kandev repair, cut it off before appending (TruncateTornTail). A
// line in the middle that is not a readable event (not JSON, or a seq
// outside 1 to MaxSeq) is skipped and reported (ReadReport.CorruptLines), and
// the events after it are numbered on from the last readable one. An event of
// a type this kandev does not know, written by a newer one, is read and kept
// whole in Event.Raw, never an error. InspectLog reads a whole log for kandev
// doctor and also reports seq numbers that repeat, go back or skip.
//
// # Reading
//
// Two readers, one forward and one from the end. Forward (forward.go), in
// blocks of whole lines: ScanLog (events), ReadAll (all of them), ScanLines
// and ReadLogBlocks (lines, for readers that decode few of them), Lines (any
// JSONL stream: an inbox, a bundle on stdin), and Follow, which keeps reading
// as the log grows, woken by file-change notifications, from a byte offset
// OffsetAfterSeq finds. Backward from the end, at a cost that depends on how
// far the reader goes and not on the log's length: ScanBackward (lines),
// ScanEventsBackward (events), ReadLast and LastEvent.
//
// # Rewinds
//
// A log is never rewritten. A rewind (kandev rewind, or a clear) appends an
// EventRewind fence: from its epoch on, the agent's conversation is what the
// log held up to its to_seq; the lines after stay in the file.
package eventlog
