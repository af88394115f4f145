// Package history turns a session's stored events into what people and agents
// read: redacted text, markers, the bounded resume context, the continuation
// prompt and the assembled transcript.
//
// It guarantees:
//   - purity: every function depends only on its arguments (no I/O, no clock),
//     so the same events always give the same bytes;
//   - redaction: Redact and RedactEvent replace secrets with [REDACTED] and
//     leave prose, paths and identifiers as they are; StreamRedactor does it
//     over streamed text as assembled, so a secret split across chunks is
//     caught, holding back at most MaxHeldBytes per stream;
//   - bounds: a resume context never exceeds its byte bound, marker text never
//     exceeds its caps, and every cut falls on a UTF-8 boundary;
//   - linear cost: resume context and transcript assembly take time in
//     proportion to the number of events.
package history
