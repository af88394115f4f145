// Package acpconform checks one side of an ACP conversation against the
// protocol as published: every message it sent validates against the ACP v1
// JSON schema, and it used no capability the other side did not declare in
// initialize (a boolean config option, fs/*, terminal/*, elicitation), nor
// the fields the protocol removed (a session answer's `models`).
//
// The schema is the one the protocol's TypeScript SDK ships
// (@agentclientprotocol/sdk, schema/v1/, version in SchemaVersion), copied
// into schema/ here; a test compares the copy with the package when the npm
// suites run. Methods only in schema.unstable.json (session/fork, ...) are
// checked against it.
//
// A conversation is the two byte streams of one side, as written by
// wiretrace: what it read (the other side's requests, which name the
// methods its answers answer and the capabilities it declared) and what it
// wrote.
package acpconform
