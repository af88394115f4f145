// Package history turns a session's stored events into what people and agents
// read: redacted text, markers, the bounded resume context, the continuation
// prompt and the assembled transcript.
//
// Everything here is a pure function of its arguments: no I/O, no clock, no
// globals that change. The same events always give the same bytes, which is
// what makes transcripts, recaps and resume contexts reproducible and testable
// with golden files.
package history
