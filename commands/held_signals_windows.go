package commands

import "os"

// statusControlCExit is the exit status of a console process ended by
// Ctrl-C or Ctrl-Break (STATUS_CONTROL_C_EXIT, 0xC000013A).
const statusControlCExit = -1073741510

// dieOf ends the process as Windows ends one that does not handle the event.
func dieOf(os.Signal) { os.Exit(statusControlCExit) }
