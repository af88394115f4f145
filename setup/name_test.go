package setup

import (
	"strings"
	"testing"
)

func TestCheckName_RefusesNamesThatAreEmptyLongOrHoldControlsOrSeparators(t *testing.T) {
	cases := []struct {
		name, want string // want "": accepted
	}{
		{"github", ""},
		{"my-server_2.local", ""},
		{"Ünïcode", ""},
		{strings.Repeat("a", MaxServerNameBytes), ""},
		{"", "is empty"},
		{strings.Repeat("a", MaxServerNameBytes+1), "over the limit"},
		{strings.Repeat("x", 1<<20), "over the limit"},
		{"a/b", "path separator"},
		{`a\b`, "path separator"},
		{"../x", "path separator"},
		{"bell\a", "control character"},
		{"line\nbreak", "control character"},
		{"esc\x1b[31m", "control character"},
		{"bad\xff", "UTF-8"},
	}
	for _, c := range cases {
		err := CheckName(c.name, "--mcp f.json")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: got %v, want it refused saying %q", c.name, err, c.want)
		case err != nil && (len(err.Error()) > 300 || strings.ContainsAny(err.Error(), "\n\x1b")):
			t.Errorf("%q: the refusal is not one short line: %q", c.name, err)
		}
	}
}
