package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	sdk "github.com/coder/acp-go-sdk"
)

func TestIsTerminal_DevNullFilesPipesAndBuffersAreNotTerminals(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, stream := range map[string]any{"/dev/null": devNull, "a file": file, "a pipe": w, "a buffer": &bytes.Buffer{}, "nil": nil} {
		if isTerminal(stream) {
			t.Errorf("%s counts as a terminal", name)
		}
	}
}

func TestAskWithoutATerminalDeniesAndSaysHowToApproveOnce(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	var stderr bytes.Buffer
	env := &Env{Stdin: devNull, Out: &Output{Out: &bytes.Buffer{}, Err: &stderr}}
	ask := askOnTerminal(env)
	title := "Write out.txt"
	req := sdk.RequestPermissionRequest{ToolCall: sdk.ToolCallUpdate{ToolCallId: "c1", Title: &title}}
	// Asked twice: each is denied, and the hint is printed once.
	first := ask(req)
	second := ask(req)
	if first || second {
		t.Fatal("ask without a terminal allowed a request")
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "Write out.txt") || !strings.Contains(lines[0], "--permissions approve-all") {
		t.Fatalf("stderr %q: want one line naming the request and how to approve", stderr.String())
	}
}

func TestPrintable_EscapesControlCharactersAndKeepsUnicode(t *testing.T) {
	cases := []struct{ in, text, line string }{
		{"plain title", "plain title", "plain title"},
		{"café ☕ 日本語 \uFFFD", "café ☕ 日本語 \uFFFD", "café ☕ 日本語 \uFFFD"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		{"bell\a back\b del\x7f", `bell\a back\b del\x7f`, `bell\a back\b del\x7f`},
		{"c1 \u009b2J", `c1 \u009b2J`, `c1 \u009b2J`},
		{"bad \x9b byte", `bad \x9b byte`, `bad \x9b byte`},
		{"two\nlines\tand tab", "two\nlines\tand tab", `two\nlines\tand tab`},
		{"crlf\r\nending", "crlf\nending", `crlf\r\nending`},
	}
	for _, tc := range cases {
		if got := printable(tc.in); got != tc.text {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := printableLine(tc.in); got != tc.line {
			t.Errorf("printableLine(%q) = %q, want %q", tc.in, got, tc.line)
		}
		var buf bytes.Buffer
		if n, err := (printableWriter{&buf}).Write([]byte(tc.in)); err != nil || n != len(tc.in) || buf.String() != tc.text {
			t.Errorf("printableWriter wrote %q (%d, %v) for %q, want %q", buf.String(), n, err, tc.in, tc.text)
		}
	}
}

func TestTTLFlag_NegativeMeansDefaultAndTheLimitIsCheckedBeforeConversion(t *testing.T) {
	cases := []struct {
		args []string
		want ttlSeconds
		err  string
	}{
		{[]string{"--ttl", "-1"}, -1, ""},
		{[]string{"--ttl=-30"}, -30, ""},
		{[]string{"--ttl", "-99999999999999999999999"}, -1, ""},
		{[]string{"--ttl", "0"}, 0, ""},
		{[]string{"--ttl", "86400"}, 86400, ""},
		{[]string{"--ttl", "86401"}, 0, "86401 is over the limit of 86400 seconds"},
		{[]string{"--ttl", "99999999999999999999999"}, 0, "99999999999999999999999 is over the limit of 86400 seconds"},
		{[]string{"--ttl", "ten"}, 0, `"ten" is not a whole number of seconds`},
		{[]string{"--ttl"}, 0, "expected a number of seconds"},
	}
	for _, tc := range cases {
		var cli struct {
			TTL ttlSeconds `name:"ttl"`
		}
		p, err := kong.New(&cli)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Parse(tc.args)
		if tc.err == "" && (err != nil || cli.TTL != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: ttl %d, err %v; want %d, %q", tc.args, cli.TTL, err, tc.want, tc.err)
		}
	}
}

func TestRun_UsageErrorsWithJSONPrintAnErrorObject(t *testing.T) {
	cases := []struct {
		args []string
		json bool
	}{
		{[]string{"--json", "list", "--bogus"}, true},
		{[]string{"list", "--json", "--no-such-flag"}, true},
		{[]string{"--json", "transcript", "a", "b", "c"}, true},
		{[]string{"list", "--bogus"}, false},
		{[]string{"prompt", "--bogus", "--", "--json"}, false},
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := Run(tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != ExitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), "kandev: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", tc.args, code, stderr.String())
		}
		if !tc.json {
			if stdout.Len() != 0 {
				t.Errorf("%v: stdout %q without --json", tc.args, stdout.String())
			}
			continue
		}
		var obj struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(stdout.Bytes(), &obj); err != nil || obj.Error.Code != "usage" || obj.Error.Message == "" {
			t.Errorf("%v: stdout %q, want {\"error\":{\"code\":\"usage\",...}}", tc.args, stdout.String())
		}
	}
}
