//go:build windows

package autostart

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// taskName is the home's task, in a kandev folder of the Task Scheduler.
func taskName(home string) string { return `kandev\` + Name(home) }

// Enable creates the home's logon task with schtasks /Create /XML; the XML
// is written, UTF-16 as schtasks wants it, to a temporary file it reads.
func Enable(j Job) (Status, error) {
	if _, err := exec.LookPath("schtasks"); err != nil {
		return Status{}, fmt.Errorf("%w: schtasks is not on PATH (the Task Scheduler's command)", ErrNoScheduler)
	}
	name := taskName(j.Home)
	who := ""
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	dir, err := os.MkdirTemp("", "kandev-autostart")
	if err != nil {
		return Status{}, fmt.Errorf("cannot write the task's XML: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "task.xml")
	if err := os.WriteFile(path, utf16LE(TaskXML(name, j, who)), 0o600); err != nil {
		return Status{}, fmt.Errorf("cannot write the task's XML: %w", err)
	}
	out, err := exec.Command("schtasks", "/Create", "/TN", name, "/XML", path, "/F").CombinedOutput()
	if err != nil {
		return Status{}, fmt.Errorf("schtasks /Create %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return Status{On: true, Via: "schtasks", Where: name}, nil
}

// Disable deletes the home's task; one that is not there is no error.
func Disable(home string) (Status, error) {
	name := taskName(home)
	if !Check(home).On {
		return Status{Via: "schtasks", Where: name}, nil
	}
	out, err := exec.Command("schtasks", "/Delete", "/TN", name, "/F").CombinedOutput()
	if err != nil {
		return Status{On: true, Via: "schtasks", Where: name}, fmt.Errorf("schtasks /Delete %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return Status{Via: "schtasks", Where: name}, nil
}

// Check reports whether the home's task exists.
func Check(home string) Status {
	name := taskName(home)
	err := exec.Command("schtasks", "/Query", "/TN", name).Run()
	return Status{On: err == nil, Via: "schtasks", Where: name}
}

// utf16LE is s in UTF-16, little-endian, with a byte order mark.
func utf16LE(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2, 2+2*len(u))
	b[0], b[1] = 0xFF, 0xFE
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	return b
}
