package history

import (
	"regexp"
	"strings"
)

// Redacted replaces every secret that Redact finds.
const Redacted = "[REDACTED]"

// secretNames are the key, header and flag names whose value is a secret. A
// name also counts as the suffix of a longer one (OPENAI_API_KEY, GITHUB_TOKEN,
// client_secret, x-api-key), matched case-insensitively.
const secretNames = `(?:api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key|token|secret|password|passwd|passphrase|credentials?|auth|authorization)`

// valuePattern matches the value after a secret name. Groups, in order: an
// environment reference ($NAME, ${NAME}: kept), the inside of a \"escaped\",
// "double-quoted" or 'single-quoted' value, and a bare value (which never
// starts with one of firstExcluded).
func valuePattern(firstExcluded string) string {
	const bare = "\\s\"'`<>(){}\\[\\],;&\\\\"
	return `(?:(\$\{\w+\}|(?-i:\$[A-Z_][A-Z0-9_]*)\b)` +
		`|\\"((?:[^"\\]|\\[^"])*)\\"` +
		`|"((?:[^"\\\n]|\\.)*)"` +
		`|'([^'\n]*)'` +
		`|([^` + bare + firstExcluded + `][^` + bare + `]*))`
}

var (
	privateKeyBlockRE = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----([\s\S]*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)`)

	authorizationHeaderRE = regexp.MustCompile(`(?i)\b(?:proxy-)?authorization[ \t]*:[ \t]*([^"'\\\r\n]*[^"'\\\r\n \t])`)

	bearerRE = regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]+=*)`)

	urlUserinfoRE = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://([^\s/?#@:"'\\<>]+:[^\s/?#@"'\\<>]+)@`)

	// keyValueRE: key=value, key: value, "key": "value", --flag=value.
	keyValueRE = regexp.MustCompile(`(?i)[\w.-]*` + secretNames + `(?:\\?["'])?([ \t]*[=:][ \t]*)` + valuePattern("="))

	// flagRE: --flag value (the value never starts with '-': that is the next flag).
	flagRE = regexp.MustCompile(`(?i)(?:^|[\s"'=])--[\w.-]*` + secretNames + `([ \t]+)` + valuePattern("=-"))

	tokenShapeRE = regexp.MustCompile(`\b(?:` + strings.Join([]string{
		`sk-[A-Za-z0-9_-]{20,}`,                // OpenAI, Anthropic (sk-ant-...)
		`[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`, // Stripe
		`gh[pousr]_[A-Za-z0-9]{30,}`,           // GitHub
		`github_pat_[A-Za-z0-9_]{30,}`,         // GitHub fine-grained
		`xox[abposr]-[A-Za-z0-9-]{10,}`,        // Slack
		`AIza[0-9A-Za-z_-]{30,}`,               // Google
		`(?:AKIA|ASIA)[0-9A-Z]{16}\b`,          // AWS access key id
		`hf_[A-Za-z0-9]{30,}`,                  // Hugging Face
		`npm_[A-Za-z0-9]{30,}`,                 // npm
		`glpat-[A-Za-z0-9_-]{20,}`,             // GitLab
		// JWT
		`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`,
	}, "|") + `)`)

	// secretKeyRE matches a whole key name that names a secret (JSON keys).
	secretKeyRE = regexp.MustCompile(`(?i)^[\w.-]*` + secretNames + `$`)

	envReferenceRE = regexp.MustCompile(`^(?:\$\{\w+\}|\$[A-Z_][A-Z0-9_]*|%\w+%|\{\{[^}]*\}\})$`)
)

// Redact returns s with secrets replaced by Redacted: bearer tokens,
// Authorization header values, values of keys and flags that name a secret
// (key=value, key: value, "key": "value", --flag value, --flag=value), URL
// userinfo, and provider token shapes (sk-..., ghp_..., xoxb-..., AKIA..., JWTs,
// ...). It leaves prose, paths and identifiers alone: a value only counts when
// it follows a secret name and a separator, or has a provider's token shape.
// Redact(Redact(s)) == Redact(s). Text with none of the trigger substrings is
// returned as is without running any regular expression.
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	s = redactGroups(s, privateKeyBlockRE, keepRedacted, 1)
	s = redactGroups(s, authorizationHeaderRE, keepHeaderValue, 1)
	s = redactGroups(s, bearerRE, keepBearerValue, 1)
	s = redactGroups(s, urlUserinfoRE, nil, 1)
	s = redactGroups(s, keyValueRE, keepKeyValue, 2, 3, 4, 5, 6)
	s = redactGroups(s, flagRE, keepKeyValue, 2, 3, 4, 5, 6)
	s = redactGroups(s, tokenShapeRE, keepTokenShape, 0)
	return s
}

// redactGroups replaces, in every match of re, the first of groups that took
// part in the match with Redacted, unless keep says the value is no secret.
func redactGroups(s string, re *regexp.Regexp, keep func(s string, m []int, value string) bool, groups ...int) string {
	matches := re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := -1, -1
		for _, g := range groups {
			if m[2*g] >= 0 {
				start, end = m[2*g], m[2*g+1]
				break
			}
		}
		if start < 0 || start == end || (keep != nil && keep(s, m, s[start:end])) {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Redacted)
		last = end
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func keepRedacted(_ string, _ []int, v string) bool {
	return strings.TrimSpace(v) == Redacted
}

// keepHeaderValue keeps prose such as "Authorization: header must be set":
// credentials always have a capital letter, digit or symbol.
func keepHeaderValue(_ string, _ []int, v string) bool {
	if strings.HasPrefix(v, Redacted) {
		return true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != ' ' && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// proseAfterBearer are words that follow "bearer" in prose, not in a header.
var proseAfterBearer = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "auth": true,
	"authentication": true, "authorization": true, "bond": true, "bonds": true,
	"can": true, "credential": true, "credentials": true, "for": true,
	"format": true, "header": true, "headers": true, "in": true, "is": true,
	"it": true, "must": true, "of": true, "on": true, "or": true, "scheme": true,
	"schemes": true, "should": true, "string": true, "that": true, "the": true,
	"this": true, "to": true, "token": true, "tokens": true, "type": true,
	"value": true, "was": true, "which": true, "will": true, "with": true,
}

func keepBearerValue(_ string, _ []int, v string) bool {
	return proseAfterBearer[strings.ToLower(v)]
}

// keepKeyValue decides that the value after a secret name is no secret: a
// placeholder (null, none, $VAR, <your-key>, a path), a key that is a path
// component (/etc/passwd: ...), or a plain word followed by more text on the
// same line after a space-separated name ("the token: it expires").
func keepKeyValue(s string, m []int, v string) bool {
	if m[0] > 0 && (s[m[0]-1] == '/' || s[m[0]-1] == '\\') {
		return true
	}
	if m[4] >= 0 { // environment reference
		return true
	}
	if isPlaceholder(v) {
		return true
	}
	bare := m[12] >= 0
	sep := s[m[2]:m[3]]
	if bare && strings.ContainsAny(sep, " \t") && isWord(v) {
		end := m[13]
		return end < len(s) && s[end] != '\n' && s[end] != '\r'
	}
	return false
}

// placeholders are values that stand for "no secret here".
var placeholders = map[string]bool{
	"null": true, "none": true, "nil": true, "true": true, "false": true,
	"undefined": true, "enabled": true, "disabled": true, "required": true,
	"optional": true, "missing": true, "set": true, "unset": true, "empty": true,
	"invalid": true, "expired": true, "valid": true, "yes": true, "no": true,
	"on": true, "off": true, "ok": true, "***": true, "...": true, "xxx": true,
	"redacted": true,
}

func isPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	switch {
	case v == "", placeholders[strings.ToLower(v)], strings.HasPrefix(v, Redacted):
		return true
	case strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"):
		return true
	case envReferenceRE.MatchString(v):
		return true
	case strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"), strings.HasPrefix(v, "~/"), strings.HasPrefix(v, "//"):
		return true
	case strings.HasPrefix(v, "/") && strings.Count(v, "/") >= 2 && !strings.ContainsAny(v, "+= "):
		return true // an absolute path, e.g. GOOGLE_APPLICATION_CREDENTIALS=/home/me/key.json
	}
	return false
}

// isWord reports whether v is made of ASCII letters only.
func isWord(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := lowerASCII(v[i]); c < 'a' || c > 'z' {
			return false
		}
	}
	return v != ""
}

// keepTokenShape keeps sk-... words without a digit: real keys are random and
// long, so have digits; hyphenated names like sk-learn-pipeline-example do not.
func keepTokenShape(_ string, _ []int, v string) bool {
	return strings.HasPrefix(v, "sk-") && !strings.ContainsAny(v, "0123456789")
}
