package commands

import (
	"strings"
	"testing"
	"text/tabwriter"
)

// The table lays rows out as text/tabwriter did before it (padding 2,
// spaces, the last column unpadded), wide characters counted as one.
func TestTable_LaysOutAsTabwriter(t *testing.T) {
	cases := [][][]string{
		{{"ID", "BADGE", "TITLE"}},
		{{"ID", "BADGE", "TITLE"}, {"20260105-090000-00000000", "waiting", "fix the lexer"}, {"x", "", "é ünïcode 漢字"}},
		{{"NAME", "INSTALLED", "COMMAND", "NOTES"}, {"demo", "true", "kandev demo-agent", ""}, {"claude-code-with-a-long-name", "false", "", "install: npm i -g x"}},
		{{"a", "b"}, {"", ""}, {strings.Repeat("w", 100), "z"}},
	}
	for _, rows := range cases {
		var want strings.Builder
		tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
		var tb table
		for _, r := range rows {
			tw.Write([]byte(strings.Join(r, "\t") + "\n"))
			tb.add(r...)
		}
		tw.Flush()
		var got strings.Builder
		tb.write(&got)
		if got.String() != want.String() {
			t.Errorf("rows %q:\ngot:\n%s\nwant:\n%s", rows, got.String(), want.String())
		}
	}
}
