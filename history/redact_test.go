package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/eventlog"
)

// fake builds a real-looking but fake secret: prefix followed by n random-looking
// letters and digits. Built at run time so secret scanners do not flag the file.
func fake(prefix string, n int) string {
	const alphabet = "aB3xY9kQ2mN7pR5tV1wZ8cD4eF6gH0jK"
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[(i*7+3)%len(alphabet)])
	}
	return b.String()
}

func fakeUpper(prefix string, n int) string {
	const alphabet = "Q7W2E9R4T1Y8U3I6O5P0ASDFGHJKLZXC"
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[(i*5+1)%len(alphabet)])
	}
	return b.String()
}

func TestRedact_ReplacesSecrets(t *testing.T) {
	jwt := fake("eyJ", 20) + "." + fake("eyJ", 30) + "." + fake("", 43)
	cases := []struct {
		name, in, want string
	}{
		{"bearer token", "curl -H 'Authorization: Bearer " + fake("", 40) + "' https://api.example.com", "curl -H 'Authorization: [REDACTED]' https://api.example.com"},
		{"bearer alone", "sent Bearer xyz to the server", "sent Bearer [REDACTED] to the server"},
		{"lowercase bearer with jwt", "bearer " + jwt, "bearer [REDACTED]"},
		{"authorization header basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: [REDACTED]"},
		{"authorization header in json", `{"Authorization":"Bearer abc.def"}`, `{"Authorization":"[REDACTED]"}`},
		{"proxy authorization", "Proxy-Authorization: Basic Zm9vOmJhcg==\nHost: x", "Proxy-Authorization: [REDACTED]\nHost: x"},
		{"env assignment openai", "export OPENAI_API_KEY=" + fake("sk-proj-", 48), "export OPENAI_API_KEY=[REDACTED]"},
		{"env assignment github token", "GITHUB_TOKEN=abc123def456", "GITHUB_TOKEN=[REDACTED]"},
		{"env assignment double quoted", `ANTHROPIC_API_KEY="hunter2 with spaces"`, `ANTHROPIC_API_KEY="[REDACTED]"`},
		{"env assignment single quoted", `password='p@ss w0rd'`, `password='[REDACTED]'`},
		{"yaml password", "db:\n  password: hunter2\n  user: app", "db:\n  password: [REDACTED]\n  user: app"},
		{"yaml plain word at end of line", "password: changeme", "password: [REDACTED]"},
		{"json field", `{"client_secret": "s3cr3t-value", "client_id": "abc"}`, `{"client_secret": "[REDACTED]", "client_id": "abc"}`},
		{"escaped json field", `{\"access_token\":\"tok123\",\"n\":1}`, `{\"access_token\":\"[REDACTED]\",\"n\":1}`},
		{"python dict", `{'api_key': 'abc123'}`, `{'api_key': '[REDACTED]'}`},
		{"query string", "https://example.com/cb?access_token=abc123&state=xyz", "https://example.com/cb?access_token=[REDACTED]&state=xyz"},
		{"flag with space", "mytool --password hunter2 --verbose", "mytool --password [REDACTED] --verbose"},
		{"flag with equals", "mytool --api-key=abc123 run", "mytool --api-key=[REDACTED] run"},
		{"flag suffix", "gh --github-token " + fake("ghp_", 36), "gh --github-token [REDACTED]"},
		{"session token", "session_token: Zx81kQ", "session_token: [REDACTED]"},
		{"private key name", `private_key = "-----BEGIN"`, `private_key = "[REDACTED]"`},
		{"credentials", "credentials=admin:admin1", "credentials=[REDACTED]"},
		{"passwd upper", "PASSWD=Tr0ub4dor", "PASSWD=[REDACTED]"},
		{"url userinfo", "git clone https://alice:s3cret@github.com/org/repo.git", "git clone https://[REDACTED]@github.com/org/repo.git"},
		{"url userinfo token", "https://x-access-token:" + fake("ghs_", 36) + "@github.com/o/r", "https://[REDACTED]@github.com/o/r"},
		{"openai key", "key is " + fake("sk-", 48) + ".", "key is [REDACTED]."},
		{"openai project key", "using " + fake("sk-proj-", 64), "using [REDACTED]"},
		{"anthropic key", "ANTHROPIC " + fake("sk-ant-api03-", 80) + " end", "ANTHROPIC [REDACTED] end"},
		{"github classic", "token " + fake("ghp_", 36), "token [REDACTED]"},
		{"github oauth", fake("gho_", 36), "[REDACTED]"},
		{"github app", "(" + fake("ghs_", 36) + ")", "([REDACTED])"},
		{"github fine grained", fake("github_pat_", 82), "[REDACTED]"},
		{"slack bot", "slack " + fake("xoxb-", 50), "slack [REDACTED]"},
		{"slack user", fake("xoxp-", 60), "[REDACTED]"},
		{"google", "maps " + fake("AIza", 35), "maps [REDACTED]"},
		{"aws access key id", "aws " + fakeUpper("AKIA", 16) + " ok", "aws [REDACTED] ok"},
		{"hugging face", fake("hf_", 34), "[REDACTED]"},
		{"npm", "//registry.npmjs.org/:_authToken=" + fake("npm_", 36), "//registry.npmjs.org/:_authToken=[REDACTED]"},
		{"gitlab", "glab " + fake("glpat-", 20), "glab [REDACTED]"},
		{"stripe", fake("sk_live_", 24), "[REDACTED]"},
		{"jwt", "id " + jwt, "id [REDACTED]"},
		{"private key block", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----"},
		{"secret in a second line", "ok\nSECRET=abc\nok", "ok\nSECRET=[REDACTED]\nok"},
		{"several on one line", "A_TOKEN=x1 B_SECRET=y2 C=z", "A_TOKEN=[REDACTED] B_SECRET=[REDACTED] C=z"},
		{"database url", "DATABASE_URL=postgres://app:pw1@localhost/db", "DATABASE_URL=postgres://[REDACTED]@localhost/db"},
		{"number value", "token: 12345", "token: [REDACTED]"},
		{"crlf line end", "token: abc\r\nnext", "token: [REDACTED]\r\nnext"},
		{"quoted passphrase", "passphrase: 'correct horse battery'", "passphrase: '[REDACTED]'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Redact(c.in)
			if got != c.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedact_LeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range []string{
		"",
		"I'll update the parser so torn last lines are skipped and reported.",
		"The tokenizer splits the input; the token is stored in the session.",
		"Bearer tokens are sent in the Authorization header.",
		"The bearer of bad news.",
		"Authorization: header must be set by the client",
		"the token: it expires after an hour",
		"author: Jane Doe",
		"max_tokens=4096 and input_tokens: 12",
		"token_count: 5",
		"call-1 demo-abc ses-0123 msg-42 turn-7",
		"/home/me/.config/kandev/config.toml and state/token.go and ./secrets/",
		"open /etc/passwd: No such file or directory",
		"if token == \"\" { return }",
		"token := os.Getenv(\"GITHUB_TOKEN\")",
		"password = os.environ[\"DB_PASSWORD\"]",
		"token = load_token()",
		"Token: tok,",
		"error: token: invalid",
		"auth.go:42: undefined: token",
		"export GITHUB_TOKEN=$GITHUB_TOKEN",
		"api_key: ${OPENAI_API_KEY}",
		`"api_key": "<your-api-key>"`,
		"password: null",
		"auth: none",
		"OAuth: enabled",
		"GOOGLE_APPLICATION_CREDENTIALS=/home/me/.gcp/key.json",
		"ssh://git@github.com/org/repo.git and https://example.com:8080/path",
		"use the --token flag to pass it",
		"task-runner sk-learn-pipeline-example-name keys monkey keyboard",
		"We visited Asia; fantasia.",
		"Authorization: [REDACTED]",
		"Bearer [REDACTED]",
		"日本語のテキスト token は保存されます",
	} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestRedact_FastPathReturnsSameString(t *testing.T) {
	s := "plain chunk of streamed text without anything sensitive in it"
	if mayHoldSecret(s) {
		t.Fatalf("mayHoldSecret(%q) = true", s)
	}
	if Redact(s) != s {
		t.Fatal("changed")
	}
	for _, s := range []string{"TOKEN", "Bearer", "x://", "AKIA", "gLpAt", "sk-"} {
		if !mayHoldSecret(s) || !mayHoldSecret([]byte(s)) {
			t.Errorf("mayHoldSecret(%q) = false", s)
		}
	}
}

func TestRedact_TriggersCoverEveryRule(t *testing.T) {
	words := append(append([]string{"authorization", "bearer", "://", "PRIVATE KEY-----"}, secretNames...), tokenPrefixes...)
	for _, w := range words {
		if !mayHoldSecret(w) || !mayHoldSecret(strings.ToUpper(w)) {
			t.Errorf("%q does not take the slow path", w)
		}
	}
}

// Redaction is linear in the text, newlines or not: eight times the text
// takes at most about eight times as long, where a scan to the end of the
// line per candidate took 23 times as long on this newline-free text (and
// a quadratic scan would take 64). Ratios of two sizes measured in one run,
// not a time limit, so a slow or busy machine (or the race detector) does not
// fail it.
func TestRedact_IsLinearOnLargeText(t *testing.T) {
	skipUnderRace(t)
	unit := "the token: it is a key, auth https://x.org -- sk-short "    // near misses
	small, big := strings.Repeat(unit, 1200), strings.Repeat(unit, 9600) // ~64 KB, ~512 KB
	fastest := func(text string) time.Duration {
		return perRun(func() {
			if Redact(text) != text {
				t.Fatal("changed text without secrets")
			}
		})
	}
	ratio, ts, tb := bestRatio(16, func() time.Duration { return fastest(small) }, func() time.Duration { return fastest(big) })
	t.Logf("~64 KB: %v, ~512 KB: %v", ts, tb)
	if ratio > 16 {
		t.Errorf("8x the text took %.1fx as long (%v against %v): not linear", ratio, tb, ts)
	}
}

func TestRedactEvent_RedactsDisplayFieldsOnly(t *testing.T) {
	key := fake("sk-proj-", 48)
	e := eventlog.Event{
		Seq: 7, Type: eventlog.EventToolCall, SessionID: "ses-token-1", TurnID: "turn-secret",
		ToolName: "Run curl -H 'Authorization: Bearer " + key + "'", ToolCallID: "call-" + key,
		Content:        "export OPENAI_API_KEY=" + key,
		Summary:        "login with " + key,
		Diagnostic:     "stderr: Authorization: Bearer " + key,
		FallbackReason: "connect https://u:p4ss@host failed",
		Input:          json.RawMessage(`{"command": "curl -H 'Authorization: Bearer ` + key + `' x", "api_key": "plain", "n": 1.50, "nested": {"password": "pw"}, "list": ["<a&b>"]}`),
		Data:           json.RawMessage(`{"token":"abc","z":[1,2],"note":"hello"}`),
	}
	RedactEvent(&e)
	if strings.Contains(e.Content+e.Summary+e.Diagnostic+string(e.Input)+string(e.Data)+e.FallbackReason, key) {
		t.Fatalf("secret survived: %+v", e)
	}
	wantInput := `{"command": "curl -H 'Authorization: [REDACTED]' x", "api_key": "[REDACTED]", "n": 1.50, "nested": {"password": "[REDACTED]"}, "list": ["<a&b>"]}`
	if string(e.Input) != wantInput {
		t.Errorf("Input\n got %s\nwant %s", e.Input, wantInput)
	}
	if want := `{"token":"[REDACTED]","z":[1,2],"note":"hello"}`; string(e.Data) != want {
		t.Errorf("Data = %s, want %s", e.Data, want)
	}
	if e.FallbackReason != "connect https://[REDACTED]@host failed" {
		t.Errorf("FallbackReason = %q", e.FallbackReason)
	}
	if e.ToolName != "Run curl -H 'Authorization: [REDACTED]'" {
		t.Errorf("ToolName = %q", e.ToolName)
	}
	if e.ToolCallID != "call-"+key || e.SessionID != "ses-token-1" || e.TurnID != "turn-secret" || e.Type != eventlog.EventToolCall || e.Seq != 7 {
		t.Errorf("identifiers changed: %+v", e)
	}
}

func TestRedactEvent_KeepsInputWithoutSecretsByteForByte(t *testing.T) {
	in := json.RawMessage(`{ "path" : "notes.txt",  "n": 1e3 }`)
	e := eventlog.Event{Input: in}
	RedactEvent(&e)
	if string(e.Input) != string(in) {
		t.Errorf("Input = %s", e.Input)
	}
}
