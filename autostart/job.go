package autostart

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// SystemdUnit is the systemd user unit of j: a oneshot service wanted by
// default.target, which the user's manager starts once at login. Exit 8
// (a session waits for its usage limit) is a success: it is not a failure
// of the job.
func SystemdUnit(j Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Unit]\nDescription=kandev: continue sessions a reboot interrupted (home %s)\n\n", systemdEscape(j.Home))
	b.WriteString("[Service]\nType=oneshot\n")
	fmt.Fprintf(&b, "Environment=%s\n", systemdQuote("KANDEV_HOME="+j.Home))
	args := make([]string, 0, 3)
	for _, a := range j.Argv() {
		args = append(args, systemdQuote(a))
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(args, " "))
	b.WriteString("SuccessExitStatus=8\n\n")
	b.WriteString("[Install]\nWantedBy=default.target\n")
	return b.String()
}

// systemdQuote quotes one word of a unit's ExecStart or Environment line:
// in double quotes, with \ and " escaped, and % and $ doubled so systemd
// expands nothing in it.
func systemdQuote(s string) string {
	return `"` + systemdEscape(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)) + `"`
}

// systemdEscape doubles the specifier and variable signs.
func systemdEscape(s string) string {
	return strings.NewReplacer("%", "%%", "$", "$$", "\n", " ").Replace(s)
}

// LaunchdPlist is the launchd agent of j: loaded at login from
// ~/Library/LaunchAgents, it runs the command once (RunAtLoad) and is not
// kept alive.
func LaunchdPlist(label string, j Job) string {
	var args strings.Builder
	for _, a := range j.Argv() {
		fmt.Fprintf(&args, "<string>%s</string>", xmlText(a))
	}
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>Label</key><string>%s</string>
<key>ProgramArguments</key><array>%s</array>
<key>EnvironmentVariables</key><dict><key>KANDEV_HOME</key><string>%s</string></dict>
<key>RunAtLoad</key><true/>
<key>KeepAlive</key><false/>
<key>ProcessType</key><string>Background</string>
</dict></plist>
`, xmlText(label), args.String(), xmlText(j.Home))
}

// TaskXML is the Task Scheduler task of j: a logon trigger for user (""
// for any user), the command with --home (a task sets no environment),
// no time limit and no second instance. schtasks /Create /XML reads it.
func TaskXML(name string, j Job, user string) string {
	userID := ""
	if user != "" {
		userID = "<UserId>" + xmlText(user) + "</UserId>"
	}
	args := `--home ` + windowsQuote(j.Home) + ` recover --all`
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo><Description>kandev: continue sessions a reboot interrupted (home %s)</Description><URI>\%s</URI></RegistrationInfo>
  <Triggers><LogonTrigger><Enabled>true</Enabled>%s</LogonTrigger></Triggers>
  <Principals><Principal id="Author">%s<LogonType>InteractiveToken</LogonType><RunLevel>LeastPrivilege</RunLevel></Principal></Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <StartWhenAvailable>true</StartWhenAvailable>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <Enabled>true</Enabled>
  </Settings>
  <Actions Context="Author"><Exec><Command>%s</Command><Arguments>%s</Arguments></Exec></Actions>
</Task>
`, xmlText(j.Home), xmlText(name), userID, userID, xmlText(j.Exe), xmlText(args))
}

// windowsQuote quotes one argument for a Windows command line.
func windowsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	slashes := 0
	for _, r := range s {
		switch r {
		case '\\':
			slashes++
			continue
		case '"':
			b.WriteString(strings.Repeat(`\`, 2*slashes+1))
		default:
			b.WriteString(strings.Repeat(`\`, slashes))
		}
		slashes = 0
		b.WriteRune(r)
	}
	b.WriteString(strings.Repeat(`\`, 2*slashes))
	b.WriteByte('"')
	return b.String()
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
