//go:build !linux

package main

import "fmt"

// terminalFigures needs a Linux pseudo-terminal (/dev/ptmx).
func (k kandev) terminalFigures(runs int) {
	fmt.Println("\nask and Ctrl-C on a terminal: not measured (needs Linux)")
}
