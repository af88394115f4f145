// Command hello is a Go hello world: scripts/bench.sh times it beside
// kandev --version, as the least any Go program takes to start on the
// machine of the run.
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
