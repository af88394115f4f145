//go:build unix

package main

import "os/exec"

// dieWithParent: macOS has no parent-death signal. The agent's stdin is a
// pipe from this tool, so it reads EOF and exits when the tool dies.
func dieWithParent(*exec.Cmd) {}
