package commands

import (
	"strings"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/notify"
)

// notifyCheck says whether the [notify] command can run (nil when none is set).
func notifyCheck(cfg *config.Config) *check {
	if cfg == nil || len(cfg.Notify.Command) == 0 {
		return nil
	}
	problem, fix := notify.CheckCommand(cfg.Notify.Command)
	if problem != "" {
		return &check{Name: "notify", Message: problem + ": no notification reaches anyone", Fix: fix}
	}
	return &check{Name: "notify", OK: true, Message: "[notify] command " + strings.Join(cfg.Notify.Command, " ")}
}
