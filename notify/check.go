package notify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CheckCommand says what keeps a [notify] command from running ("" when
// nothing does) and how to fix it: a hook that cannot start fails only
// when a session needs a person, which is the worst time to find out.
func CheckCommand(command []string) (problem, fix string) {
	if len(command) == 0 {
		return "", ""
	}
	name := command[0]
	const cfg = "set [notify] command in the config to a program that exists, e.g. command = [\"notify-send\", \"kandev\"]"
	if strings.TrimSpace(name) == "" {
		return "[notify] command starts with an empty program name", cfg
	}
	if !strings.ContainsRune(name, filepath.Separator) && !strings.ContainsRune(name, '/') {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Sprintf("[notify] command %q is not on PATH", name), "install " + name + ", or " + cfg
		}
		return "", ""
	}
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("[notify] command %s does not exist", name), cfg
	case err != nil:
		return fmt.Sprintf("[notify] command %s cannot be read: %v", name, err), cfg
	case fi.IsDir():
		return fmt.Sprintf("[notify] command %s is a directory", name), cfg
	}
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Sprintf("[notify] command %s is not executable", name), "chmod +x " + name + " (or " + cfg + ")"
	}
	return "", ""
}
