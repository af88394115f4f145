// Package procstat reads /proc/PID/stat on Linux. It imports only early
// standard packages (bytes, os, strconv), so the agent's supervisor
// (internal/supervise), which runs from package initialisation before most
// of the binary, can use it as state does.
package procstat

import (
	"bytes"
	"os"
	"strconv"
)

// Fields are the fields of /proc/PID/stat after the command name (which may
// hold spaces and parentheses; fields resume after the last ')'), so field 3
// (the state) is Fields[0]; nil when the process does not exist.
func Fields(pid int) [][]byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// Start is field 22 of /proc/PID/stat (when the process started), "" for a
// process that does not exist or is a zombie (dead for every caller here).
func Start(pid int) string {
	f := Fields(pid)
	if len(f) < 20 || string(f[0]) == "Z" {
		return ""
	}
	return string(f[19])
}
