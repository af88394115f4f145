package autostart

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// homes are the homes the generated jobs must carry intact.
var homes = []string{"/home/ana/.kandev", "/home/ana/my kandev", `/tmp/100% "odd" $HOME \x`}

func TestSystemdUnit_HasTheKeysAOneshotLoginUnitNeeds(t *testing.T) {
	for _, home := range homes {
		u := SystemdUnit(Job{Exe: "/usr/local/bin/kandev", Home: home})
		for _, want := range []string{"[Unit]\n", "[Service]\n", "Type=oneshot\n", "ExecStart=\"/usr/local/bin/kandev\" \"recover\" \"--all\"\n",
			"Environment=\"KANDEV_HOME=", "SuccessExitStatus=8\n", "[Install]\n", "WantedBy=default.target\n"} {
			if !strings.Contains(u, want) {
				t.Errorf("home %q: the unit lacks %q:\n%s", home, want, u)
			}
		}
		if got := unitEnvironment(t, u); got != home {
			t.Errorf("the unit's KANDEV_HOME reads back as %q, want %q", got, home)
		}
	}
}

// unitEnvironment reads KANDEV_HOME back from the unit, undoing
// systemdQuote as systemd does.
func unitEnvironment(t *testing.T, unit string) string {
	t.Helper()
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			v = strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)
			v = strings.NewReplacer(`\\`, `\`, `\"`, `"`, "%%", "%", "$$", "$").Replace(v)
			return strings.TrimPrefix(v, "KANDEV_HOME=")
		}
	}
	t.Fatal("no Environment line")
	return ""
}

func TestSystemdUnit_PassesSystemdAnalyzeVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("SKIP: systemd-analyze is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, home := range homes {
		path := filepath.Join(t.TempDir(), Name(home)+".service")
		os.WriteFile(path, []byte(SystemdUnit(Job{Exe: exe, Home: home})), 0o600)
		out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput()
		if err != nil || strings.Contains(string(out), Name(home)) {
			t.Errorf("home %q: systemd-analyze verify: %v\n%s", home, err, out)
		}
	}
}

// plistDoc is a property list's top dict as key/value pairs.
type plistDoc struct {
	Dict struct {
		Items []struct {
			XMLName xml.Name
			Text    string `xml:",chardata"`
			Inner   []byte `xml:",innerxml"`
		} `xml:",any"`
	} `xml:"dict"`
}

func TestLaunchdPlist_HasTheKeysALoginAgentNeeds(t *testing.T) {
	for _, home := range homes {
		var doc plistDoc
		p := LaunchdPlist("dev.kandev."+Name(home), Job{Exe: "/opt/kandev bin/kandev", Home: home})
		dec := xml.NewDecoder(strings.NewReader(p))
		dec.Strict = false
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("not XML: %v\n%s", err, p)
		}
		got := map[string]string{}
		items := doc.Dict.Items
		for i := 0; i+1 < len(items); i += 2 {
			if items[i].XMLName.Local == "key" {
				got[items[i].Text] = items[i+1].XMLName.Local + ":" + string(items[i+1].Inner)
			}
		}
		want := map[string]string{
			"Label":                "string:dev.kandev." + Name(home),
			"ProgramArguments":     "array:<string>/opt/kandev bin/kandev</string><string>recover</string><string>--all</string>",
			"RunAtLoad":            "true:",
			"EnvironmentVariables": "dict:<key>KANDEV_HOME</key><string>" + xmlText(home) + "</string>",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("home %q: %s = %q, want %q", home, k, got[k], v)
			}
		}
	}
}

// task is the part of a Task Scheduler task that must be there.
type task struct {
	Triggers struct {
		Logon *struct {
			Enabled string
			UserID  string `xml:"UserId"`
		} `xml:"LogonTrigger"`
	}
	Principals struct {
		Principal struct {
			LogonType string
		}
	}
	Settings struct {
		MultipleInstancesPolicy, ExecutionTimeLimit, Enabled string
	}
	Actions struct {
		Exec struct {
			Command, Arguments string
		}
	}
}

func TestTaskXML_HasTheElementsALogonTaskNeeds(t *testing.T) {
	for _, home := range homes {
		x := TaskXML(`kandev\`+Name(home), Job{Exe: `C:\Program Files\kandev\kandev.exe`, Home: home}, `PC\ana`)
		var tk task
		// Written UTF-16 on disk; read here as the string it encodes.
		if err := xml.Unmarshal([]byte(strings.Replace(x, `encoding="UTF-16"`, "", 1)), &tk); err != nil {
			t.Fatalf("not XML: %v\n%s", err, x)
		}
		switch {
		case tk.Triggers.Logon == nil || tk.Triggers.Logon.Enabled != "true" || tk.Triggers.Logon.UserID != `PC\ana`:
			t.Errorf("no enabled logon trigger for the user: %+v", tk.Triggers.Logon)
		case tk.Principals.Principal.LogonType != "InteractiveToken":
			t.Errorf("principal %+v", tk.Principals.Principal)
		case tk.Settings.MultipleInstancesPolicy != "IgnoreNew" || tk.Settings.ExecutionTimeLimit != "PT0S" || tk.Settings.Enabled != "true":
			t.Errorf("settings %+v", tk.Settings)
		case tk.Actions.Exec.Command != `C:\Program Files\kandev\kandev.exe`:
			t.Errorf("command %q", tk.Actions.Exec.Command)
		case !strings.HasPrefix(tk.Actions.Exec.Arguments, "--home ") || !strings.HasSuffix(tk.Actions.Exec.Arguments, " recover --all"):
			t.Errorf("arguments %q", tk.Actions.Exec.Arguments)
		}
	}
}

func TestWindowsQuote(t *testing.T) {
	cases := map[string]string{`C:\k`: `C:\k`, `C:\my home`: `"C:\my home"`, `a"b`: `"a\"b"`, `C:\dir \`: `"C:\dir \\"`, "": `""`}
	for in, want := range cases {
		if got := windowsQuote(in); got != want {
			t.Errorf("windowsQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestName_OneJobPerHome(t *testing.T) {
	if Name("/a/.kandev") == Name("/b/.kandev") || Name("/a/.kandev") != Name("/a/.kandev/") {
		t.Fatal("names do not follow homes")
	}
}
