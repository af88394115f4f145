package history

import (
	"regexp"
	"strings"
	"sync"
)

// Redacted replaces every secret that Redact finds.
const Redacted = "[REDACTED]"

// Redact returns s with secrets replaced by Redacted: bearer tokens,
// Authorization header values, values of keys and flags that name a secret
// (key=value, key: value, "key": "value", --flag value, --flag=value), URL
// userinfo, and provider token shapes (sk-..., ghp_..., xoxb-..., AKIA..., JWTs,
// ...). It leaves prose, paths and identifiers alone: a value only counts when
// it follows a secret name and a separator, or has a provider's token shape.
// Redact(Redact(s)) == Redact(s).
//
// It runs on every streamed chunk, so it is cheap when there is nothing to do:
// text with none of the trigger substrings is returned without any regular
// expression work, and each rule runs its (anchored) expression only where its
// literal occurs.
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	if strings.Contains(s, "PRIVATE KEY-----") {
		s = redactMatches(s, rx().privateKeyBlock, keepRedacted, 1)
	}
	s = applySpans(s, authorizationHeaderSpans(s))
	s = applySpans(s, bearerSpans(s))
	s = applySpans(s, urlUserinfoSpans(s))
	s = applySpans(s, keyValueSpans(s))
	s = applySpans(s, flagSpans(s))
	s = applySpans(s, tokenShapeSpans(s))
	return s
}

// redactRegexps are compiled on first use, not at start-up: most kandev
// commands never redact, and start-up time is paid by every invocation.
type redactRegexps struct {
	privateKeyBlock *regexp.Regexp
	headerValue     *regexp.Regexp
	bearerValue     *regexp.Regexp
	userinfo        *regexp.Regexp
	keyValue        *regexp.Regexp
	flagValue       *regexp.Regexp
	tokenShape      *regexp.Regexp
	envReference    *regexp.Regexp
}

var rx = sync.OnceValue(func() *redactRegexps {
	return &redactRegexps{
		privateKeyBlock: regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----([\s\S]*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)`),

		// The rest are anchored: each runs where its literal (header or flag name,
		// separator, "://", token prefix) was found.
		headerValue: regexp.MustCompile(`^[ \t]*:[ \t]*([^"'\\\r\n]*[^"'\\\r\n \t])`),
		bearerValue: regexp.MustCompile(`^[ \t]+([A-Za-z0-9\-._~+/]+=*)`),
		userinfo:    regexp.MustCompile(`^([^\s/?#@:"'\\<>]+:[^\s/?#@"'\\<>]+)@`),
		keyValue:    regexp.MustCompile(`^([ \t]*)` + valuePattern("=")),
		flagValue:   regexp.MustCompile(`^([ \t]+)` + valuePattern("=-")),

		tokenShape: regexp.MustCompile(`^(?:` + strings.Join([]string{
			`sk-[A-Za-z0-9_-]{20,}`,                                         // OpenAI, Anthropic (sk-ant-...)
			`[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`,                          // Stripe
			`gh[pousr]_[A-Za-z0-9]{30,}`,                                    // GitHub
			`github_pat_[A-Za-z0-9_]{30,}`,                                  // GitHub fine-grained
			`xox[abposr]-[A-Za-z0-9-]{10,}`,                                 // Slack
			`AIza[0-9A-Za-z_-]{30,}`,                                        // Google
			`(?:AKIA|ASIA)[0-9A-Z]{16}\b`,                                   // AWS access key id
			`hf_[A-Za-z0-9]{30,}`,                                           // Hugging Face
			`npm_[A-Za-z0-9]{30,}`,                                          // npm
			`glpat-[A-Za-z0-9_-]{20,}`,                                      // GitLab
			`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, // JWT
		}, "|") + `)`),

		envReference: regexp.MustCompile(`^(?:\$\{\w+\}|\$[A-Z_][A-Z0-9_]*|%\w+%|\{\{[^}]*\}\})$`),
	}
})

var (
	tokenPrefixes = []string{"sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza", "AKIA", "ASIA", "hf_", "npm_", "glpat-", "eyJ"}
)

// valuePattern matches the value after a secret name. Groups, numbered from 2:
// an environment reference ($NAME, ${NAME}: kept), the inside of a \"escaped\",
// "double-quoted" or 'single-quoted' value, and a bare value (which never
// starts with one of firstExcluded).
func valuePattern(firstExcluded string) string {
	const bare = "\\s\"'`<>(){}\\[\\],;&\\\\"
	return `(?:(\$\{\w+\}|\$[A-Z_][A-Z0-9_]*\b)` +
		`|\\"((?:[^"\\\n]|\\[^"\n])*)\\"` +
		`|"((?:[^"\\\n]|\\.)*)"` +
		`|'([^'\n]*)'` +
		`|([^` + bare + firstExcluded + `][^` + bare + `]*))`
}

// secretNames are the key, header and flag names whose value is a secret; a
// longer name that ends with one counts too (OPENAI_API_KEY, GITHUB_TOKEN,
// client_secret, x-api-key). Compared ignoring ASCII case.
var secretNames = func() []string {
	names := []string{"token", "secret", "password", "passwd", "passphrase", "credential", "credentials", "auth", "authorization"}
	for _, p := range []string{"api", "access", "secret", "private", "signing", "encryption"} {
		names = append(names, p+"key", p+"_key", p+"-key")
	}
	return names
}()

// namesSecret reports whether key (letters, digits, '_', '.', '-') ends with a
// secret name.
func namesSecret(key string) bool {
	for _, n := range secretNames {
		if len(key) >= len(n) && hasPrefixFold(key, len(key)-len(n), n) {
			return true
		}
	}
	return false
}

// span is a byte range of a string to replace with Redacted.
type span struct{ start, end int }

// applySpans replaces the spans (in order, not overlapping) with Redacted.
func applySpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Redacted)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactMatches replaces group g of every match of re, unless keep says no.
func redactMatches(s string, re *regexp.Regexp, keep func(string) bool, g int) string {
	var spans []span
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		if m[2*g] < m[2*g+1] && !keep(s[m[2*g]:m[2*g+1]]) {
			spans = append(spans, span{m[2*g], m[2*g+1]})
		}
	}
	return applySpans(s, spans)
}

func keepRedacted(v string) bool { return strings.TrimSpace(v) == Redacted }

// authorizationHeaderSpans finds "Authorization: <value>" (also
// Proxy-Authorization) and redacts the value to the end of the line or quote.
func authorizationHeaderSpans(s string) []span {
	var spans []span
	lines := newLineEnds(s)
	for i := indexFold(s, "authorization", 0); i >= 0; i = indexFold(s, "authorization", i+1) {
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		at := i + len("authorization")
		if m := rx().headerValue.FindStringSubmatchIndex(s[at:lines.of(at)]); m != nil && !keepHeaderValue(s[at+m[2]:at+m[3]]) {
			spans = append(spans, span{at + m[2], at + m[3]})
		}
	}
	return spans
}

// keepHeaderValue keeps prose such as "Authorization: header must be set":
// credentials always have a capital letter, digit or symbol.
func keepHeaderValue(v string) bool {
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

func bearerSpans(s string) []span {
	var spans []span
	lines := newLineEnds(s)
	for i := indexFold(s, "bearer", 0); i >= 0; i = indexFold(s, "bearer", i+1) {
		if i > 0 && isWordByte(s[i-1]) {
			continue
		}
		at := i + len("bearer")
		if m := rx().bearerValue.FindStringSubmatchIndex(s[at:lines.of(at)]); m != nil && !proseAfterBearer[strings.ToLower(s[at+m[2]:at+m[3]])] {
			spans = append(spans, span{at + m[2], at + m[3]})
		}
	}
	return spans
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

// urlUserinfoSpans redacts the user:password of scheme://user:password@host.
func urlUserinfoSpans(s string) []span {
	var spans []span
	lines := newLineEnds(s)
	for i := strings.Index(s, "://"); i >= 0; {
		if i > 0 && isSchemeByte(s[i-1]) {
			at := i + 3
			if m := rx().userinfo.FindStringSubmatchIndex(s[at:lines.of(at)]); m != nil {
				spans = append(spans, span{at + m[2], at + m[3]})
			}
		}
		next := strings.Index(s[i+3:], "://")
		if next < 0 {
			break
		}
		i += 3 + next
	}
	return spans
}

// keyValueSpans finds every '=' or ':' that follows a key naming a secret
// (KEY=v, key: v, "key": "v", \"key\":\"v\", --key=v) and redacts the value.
func keyValueSpans(s string) []span {
	var spans []span
	lines := newLineEnds(s)
	done := 0 // no candidate before this offset: it is inside a redacted value
	for k := 0; k < len(s); k++ {
		if (s[k] != '=' && s[k] != ':') || k < done {
			continue
		}
		j := k
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		sepStart := j
		if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
			j--
			if j > 0 && s[j-1] == '\\' {
				j--
			}
		}
		keyEnd := j
		for j > 0 && isKeyByte(s[j-1]) {
			j--
		}
		if j == keyEnd || !namesSecret(s[j:keyEnd]) {
			continue
		}
		if j > 0 && (s[j-1] == '/' || s[j-1] == '\\') {
			continue // a path component: open /etc/passwd: no such file
		}
		at := k + 1
		m := rx().keyValue.FindStringSubmatchIndex(s[at:lines.of(at)])
		if m == nil {
			continue
		}
		spaced := sepStart < k || m[3] > m[2]
		if sp, ok := valueSpan(s, at, m, spaced); ok {
			spans = append(spans, sp)
			done = sp.end
		}
	}
	return spans
}

// flagSpans redacts the value of a space-separated --flag that names a secret.
func flagSpans(s string) []span {
	var spans []span
	lines := newLineEnds(s)
	for i := strings.Index(s, "--"); i >= 0; {
		if i == 0 || strings.IndexByte(" \t\n\"'=", s[i-1]) >= 0 {
			end := i + 2
			for end < len(s) && isKeyByte(s[end]) {
				end++
			}
			if namesSecret(s[i+2 : end]) {
				if m := rx().flagValue.FindStringSubmatchIndex(s[end:lines.of(end)]); m != nil {
					if sp, ok := valueSpan(s, end, m, true); ok {
						spans = append(spans, sp)
					}
				}
			}
		}
		next := strings.Index(s[i+2:], "--")
		if next < 0 {
			break
		}
		i += 2 + next
	}
	return spans
}

// valueSpan picks the value out of a keyValueRE or flagValueRE match at offset
// at, unless it is no secret: an environment reference, a placeholder (null,
// none, <your-key>, a path), code (a call or index expression), or a plain
// word that a space separates from the name and more text follows on the line
// ("the token: it expires").
func valueSpan(s string, at int, m []int, spaced bool) (span, bool) {
	if m[4] >= 0 { // environment reference
		return span{}, false
	}
	for g := 3; g <= 6; g++ {
		start, end := m[2*g], m[2*g+1]
		if start < 0 {
			continue
		}
		v := s[at+start : at+end]
		if isPlaceholder(v) {
			return span{}, false
		}
		e := at + end
		if g == 6 && e < len(s) && (s[e] == '(' || s[e] == '[') {
			return span{}, false // code: password = os.environ["DB_PASSWORD"], token = load()
		}
		if g == 6 && spaced && isWord(v) && e < len(s) && s[e] != '\n' && s[e] != '\r' {
			return span{}, false
		}
		return span{at + start, at + end}, true
	}
	return span{}, false
}

// tokenShapeSpans redacts words that have a provider's token shape.
func tokenShapeSpans(s string) []span {
	var spans []span
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte("srgxAhne", c) < 0 || (i > 0 && isWordByte(s[i-1])) || !hasAnyPrefix(s[i:], tokenPrefixes) {
			continue
		}
		end := i
		for end < len(s) && (isWordByte(s[end]) || s[end] == '-' || s[end] == '.') {
			end++
		}
		m := rx().tokenShape.FindStringIndex(s[i:end])
		if m == nil {
			continue
		}
		v := s[i : i+m[1]]
		if strings.HasPrefix(v, "sk-") && !strings.ContainsAny(v, "0123456789") {
			continue // a hyphenated name like sk-learn-pipeline-example: real keys have digits
		}
		spans = append(spans, span{i, i + m[1]})
		i += m[1] - 1
	}
	return spans
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
	case rx().envReference.MatchString(v):
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

func isWordByte(c byte) bool {
	return c == '_' || c-'0' < 10 || lowerASCII(c)-'a' < 26
}

func isKeyByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }

func isSchemeByte(c byte) bool { return isKeyByte(c) || c == '+' }

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// indexFold returns the index of the lowercase word w in s at or after from,
// ignoring ASCII case, or -1.
func indexFold(s, w string, from int) int {
	for i := from; i+len(w) <= len(s); i++ {
		if lowerASCII(s[i]) == w[0] && hasPrefixFold(s, i, w) {
			return i
		}
	}
	return -1
}

// lineEnds finds the end of the line that holds s[at] (its '\n', else
// len(s)) for the offsets each span finder asks as it walks s (in increasing
// order): it scans s once in all, where a scan per candidate would be quadratic
// in a long text without newlines (a minified file, a base64 blob).
type lineEnds struct {
	s         string
	from, end int // s[from:end] holds no newline, and end is its line's end
}

func newLineEnds(s string) *lineEnds { return &lineEnds{s: s, from: 0, end: -1} }

func (l *lineEnds) of(at int) int {
	if at < l.from || at > l.end { // not on the stretch scanned last
		l.from, l.end = at, len(l.s)
		if i := strings.IndexByte(l.s[at:], '\n'); i >= 0 {
			l.end = at + i
		}
	}
	return l.end
}
