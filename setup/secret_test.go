package setup

import (
	"strings"
	"testing"

	"github.com/kandev/kandev/state"
)

func TestCheck_ALiteralUnderASecretsNameIsRefusedAndAReferencePasses(t *testing.T) {
	cases := []struct {
		name   string
		srv    state.MCPServer
		refuse bool
	}{
		{"MYSQL_PWD literal", env("MYSQL_PWD", "hunter2"), true},
		{"PGPASSWORD literal", env("PGPASSWORD", "hunter2"), true},
		{"db_password in lower case", env("db_password", "hunter2"), true},
		{"LDAP_PASSWD", env("LDAP_PASSWD", "x"), true},
		{"SSH_PASSPHRASE", env("SSH_PASSPHRASE", "open sesame"), true},
		{"CLIENT_SECRET", env("CLIENT_SECRET", "abc"), true},
		{"SLACK_TOKEN", env("SLACK_TOKEN", "abc"), true},
		{"OPENAI_API_KEY", env("OPENAI_API_KEY", "abc"), true},
		{"MAPS_APIKEY", env("MAPS_APIKEY", "abc"), true},
		{"GOOGLE_CREDENTIALS", env("GOOGLE_CREDENTIALS", `{"type":"service_account"}`), true},
		{"SSH_PRIVATE_KEY", env("SSH_PRIVATE_KEY", "-----BEGIN"), true},
		{"a reference under a secret's name", env("MYSQL_PWD", "${MYSQL_PWD}"), false},
		{"an empty value", env("MYSQL_PWD", ""), false},
		{"a switch under a secret's name", env("DISABLE_TOKEN_CACHE", "1"), false},
		{"where the secret is, not the secret", env("GOOGLE_CREDENTIALS_FILE", "/run/secrets/gcp.json"), false},
		{"a token directory", env("TOKEN_DIR", "/var/tokens"), false},
		{"PWD is the working directory", env("PWD", "/home/me"), false},
		{"an ordinary variable", env("LOG_LEVEL", "debug"), false},
		{"Cookie literal", header("Cookie", "session=abc123"), true},
		{"Set-Cookie literal", header("Set-Cookie", "session=abc123"), true},
		{"Authorization literal", header("Authorization", "Basic dXNlcjpwYXNz"), true},
		{"Proxy-Authorization literal", header("Proxy-Authorization", "Basic dXNlcjpwYXNz"), true},
		{"X-Api-Key literal", header("X-Api-Key", "k-42"), true},
		{"x-auth-token literal", header("x-auth-token", "k-42"), true},
		{"X-Vault-Token literal", header("X-Vault-Token", "s.abc"), true},
		{"Cookie with a reference", header("Cookie", "session=${SESSION_COOKIE}"), false},
		{"Authorization with a reference", header("Authorization", "Bearer ${TOKEN}"), false},
		{"an ordinary header", header("Accept", "application/json"), false},
	}
	for _, c := range cases {
		err := Check(c.srv, "--mcp f.json")
		if (err != nil) != c.refuse {
			t.Errorf("%s: Check = %v, want refused %v", c.name, err, c.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), "looks like a secret") {
			t.Errorf("%s: the error gives no advice: %v", c.name, err)
		}
	}
}

func env(k, v string) state.MCPServer {
	return state.MCPServer{Name: "s", Command: "mcp", Env: map[string]string{k: v}}
}

func header(k, v string) state.MCPServer {
	return state.MCPServer{Name: "s", Type: "http", URL: "https://mcp.example.com", Headers: map[string]string{k: v}}
}

func TestMissingSummary_IsOneWholeSentenceWhateverTheNames(t *testing.T) {
	many := make([]string, 200)
	for i := range many {
		many[i] = "A_RATHER_LONG_VARIABLE_NAME_FOR_A_SERVER_" + strings.Repeat("X", i%7)
	}
	cases := []struct {
		name    string
		missing []string
		want    []string
	}{
		{"one", []string{"NOTES_TOKEN"}, []string{"1 variable is not set", "${NOTES_TOKEN}", "set them and resume"}},
		{"two", []string{"A", "B"}, []string{"2 variables are not set", "${A}, ${B});"}},
		{"two hundred", many, []string{"200 variables are not set", "${" + many[0] + "}", "more); passed empty"}},
		{"one very long name", []string{strings.Repeat("N", 5000)}, []string{"1 variable is not set", "...}"}},
	}
	for _, c := range cases {
		got := MissingSummary(c.missing)
		if len(got) > 1024 || !strings.HasSuffix(got, ".") {
			t.Errorf("%s: %d bytes, not one whole sentence: %q", c.name, len(got), got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", c.name, got, w)
			}
		}
	}
}
