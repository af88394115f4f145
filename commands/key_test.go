package commands

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckKey_RefusesWhatCannotBeAName(t *testing.T) {
	cases := []struct {
		key string
		ok  bool
	}{
		{"nightly-2026-12-01", true},
		{"ci run 42 / retry", true},
		{strings.Repeat("k", MaxKeyBytes), true},
		{strings.Repeat("k", MaxKeyBytes+1), false},
		{"   ", false},
		{"a\nb", false},
		{"a\x1bb", false},
	}
	for _, c := range cases {
		err := checkKey(c.key)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrUsage) {
			t.Errorf("checkKey(%q) = %v, want ok=%v (a usage error otherwise)", c.key, err, c.ok)
		}
	}
}
