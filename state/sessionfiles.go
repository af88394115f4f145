package state

import (
	"errors"
	"fmt"
	"os"

	"github.com/kandev/kandev/internal/safefile"
)

// OpenOwnerOut opens the session's owner.out for appending (created 0600),
// where a detached owner's stdout and stderr go. Like every session file it
// is never opened through a symbolic link: a link is refused (ErrSymlink).
func (h *Home) OpenOwnerOut(id string) (*os.File, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	f, err := safefile.Open(h.OwnerOutPath(id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, filePerm)
	if err != nil && !errors.Is(err, safefile.ErrSymlink) { // a refusal already names the file
		err = fmt.Errorf("open %s: %w", h.OwnerOutPath(id), safefile.BareCause(err))
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readPromptHandoff returns the prompt a command handed to the detached
// owner it started; ok is false when there is none. A symbolic link in its
// place is refused (ErrSymlink), never read.
func (h *Home) readPromptHandoff(id string) (prompt string, ok bool, err error) {
	if err := ValidateID(id); err != nil {
		return "", false, err
	}
	b, err := safefile.ReadFile(h.PromptHandoffPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// ReadDigest returns the bytes of session id's recap digest (a cache, see
// DigestPath), refusing a symbolic link in its place like any session file.
func (h *Home) ReadDigest(id string) ([]byte, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	return safefile.ReadFile(h.DigestPath(id))
}
