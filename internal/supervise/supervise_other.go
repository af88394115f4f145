//go:build !unix

package supervise

// Main returns at once: on Windows an agent runs without a supervisor.
func Main() {}
