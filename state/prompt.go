package state

import (
	"errors"
	"fmt"
)

// MaxPromptBytes bounds one prompt as a person or a script sends it (the
// resume context kandev adds is bounded on its own). Every agent reads its
// stdio a line at a time with a buffer of some megabytes, and one JSON line
// carries the prompt escaped, so past this a prompt may never arrive whole.
const MaxPromptBytes = 1 << 20

// ErrPromptTooLarge marks a prompt over MaxPromptBytes; commands map it to
// a usage error.
var ErrPromptTooLarge = errors.New("prompt too large")

// PromptTooLargeError is a prompt refused before any agent saw it.
type PromptTooLargeError struct {
	Size int  // bytes read
	More bool // only the first Size bytes were read: there was more
}

func (e *PromptTooLargeError) Error() string {
	size := sizeText(e.Size)
	if e.More {
		size = "more than " + size
	}
	return fmt.Sprintf("the prompt is %s, over the limit of 1 MiB (%d bytes) per prompt: nothing was sent; put the text in a file in the workspace and ask the agent to read it",
		size, MaxPromptBytes)
}

// Unwrap makes errors.Is(err, ErrPromptTooLarge) true.
func (e *PromptTooLargeError) Unwrap() error { return ErrPromptTooLarge }

// CheckPrompt refuses a prompt over MaxPromptBytes.
func CheckPrompt(text string) error {
	if len(text) > MaxPromptBytes {
		return &PromptTooLargeError{Size: len(text)}
	}
	return nil
}

func sizeText(n int) string {
	if n > MaxPromptBytes {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
