package commands

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kandev/kandev/autostart"
)

// autostartCmd is kandev autostart.
type autostartCmd struct {
	Action string `arg:"" enum:"enable,disable,status" help:"enable, disable or status."`
}

// Help shows an example.
func (c *autostartCmd) Help() string {
	return "At login the operating system runs kandev recover --all once for this home (a systemd user unit,\n" +
		"a launchd agent, a Task Scheduler logon task); nothing of kandev's keeps running.\n\n" +
		"Examples:\n  kandev autostart enable\n  kandev autostart status\n  kandev autostart disable"
}

// autostartOutput is kandev autostart --json.
type autostartOutput struct {
	Autostart autostartState `json:"autostart"`
}

type autostartState struct {
	Home string `json:"home"`
	autostart.Status
}

func (c *autostartCmd) readsOnly() bool { return c.Action == "status" }

// Run installs, removes or reports the home's login-time job.
func (c *autostartCmd) Run(env *Env) error {
	dir, err := env.homeDir()
	if err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	var st autostart.Status
	switch c.Action {
	case "enable":
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("cannot find the kandev binary to run at login: %w", err)
		}
		if st, err = autostart.Enable(autostart.Job{Exe: exe, Home: dir}); err != nil {
			return err
		}
	case "disable":
		if st, err = autostart.Disable(dir); err != nil {
			return err
		}
	default:
		st = autostart.Check(dir)
	}
	env.Out.Object(autostartOutput{autostartState{Home: dir, Status: st}}, func(w io.Writer) {
		fmt.Fprintln(w, autostartLine(c.Action, dir, st))
	})
	return nil
}

// autostartLine says in one line what is in force now.
func autostartLine(action, home string, st autostart.Status) string {
	switch {
	case st.On && action == "enable":
		return fmt.Sprintf("autostart on: at login, kandev recover --all runs once for %s (%s %s; kandev autostart disable removes it)", home, st.Via, st.Where)
	case st.On:
		return fmt.Sprintf("autostart on for %s (%s %s)", home, st.Via, st.Where)
	case action == "disable":
		return "autostart off for " + home
	}
	return "autostart off for " + home + " (kandev autostart enable turns it on)"
}
