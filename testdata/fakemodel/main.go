// Command fakemodel is the tests' fake model server: one of the wire
// formats real agents speak (-format messages, responses, chat or gemini),
// answered deterministically. See internal/fakemodel.
package main

import (
	"os"

	"github.com/kandev/kandev/internal/fakemodel"
)

func main() { fakemodel.Main(os.Args[1:]) }
