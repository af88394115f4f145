package history

import (
	"testing"
	"unicode/utf8"
)

func TestClip_NeverSplitsACharacterAndMarksTheCut(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc..."},
		{"héllo", 2, "h..."}, // é is two bytes: cutting at 2 would split it
		{"日本語", 4, "日..."},
		{"日本語", 0, "..."},
	}
	for _, c := range cases {
		got := Clip(c.in, c.n)
		if got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q is not valid UTF-8", c.in, c.n, got)
		}
	}
}
