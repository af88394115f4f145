package commands

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/kandev/kandev/internal/version"
)

// manCmd is the hidden `kandev __man`: it prints kandev(1) in roff, made
// from the same command model as --help, so the page in the release
// archives never drifts from the binary beside it.
type manCmd struct {
	Date string `help:"The page's date (default: the build's date)." placeholder:"YYYY-MM-DD"`
}

func (c *manCmd) readsOnly() bool { return true }

// Run prints the page.
func (c *manCmd) Run(env *Env, k *kong.Context) error {
	v := version.Get()
	date := c.Date
	if date == "" && len(v.Date) >= len("2006-01-02") {
		date = v.Date[:len("2006-01-02")]
	}
	return writeManPage(env.Out.Out, k.Model, v.Version, date)
}

// writeManPage renders app as a section 1 man page: the synopsis, the global
// flags, then each visible command with its help, example and flags, and
// the exit codes.
func writeManPage(w io.Writer, app *kong.Application, ver, date string) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s 1 %s %s \"User Commands\"\n", strings.ToUpper(app.Name), roffQuote(date), roffQuote(app.Name+" "+ver))
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", app.Name, roffText(strings.TrimSuffix(app.Help, ".")))
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n[\\fIflags\\fR] \\fIcommand\\fR [\\fIarguments\\fR]\n", app.Name)
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(roffParagraphs(app.Help))
	b.WriteString(".SH GLOBAL FLAGS\n")
	writeManFlags(&b, app.Flags)
	b.WriteString(".SH COMMANDS\n")
	for _, cmd := range app.Leaves(true) {
		fmt.Fprintf(&b, ".SS %s\n", roffText(app.Name+" "+cmd.Summary()))
		b.WriteString(roffParagraphs(cmd.Help))
		if cmd.Detail != "" {
			b.WriteString(".PP\n.nf\n" + roffText(cmd.Detail) + "\n.fi\n")
		}
		writeManFlags(&b, cmd.Flags)
	}
	b.WriteString(".SH EXIT STATUS\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, ".TP\n.B %d\n%s\n", e.code, roffText(e.means))
	}
	b.WriteString(".SH ENVIRONMENT\n")
	for _, e := range manEnvironment {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", e.code, roffText(e.means))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var manEnvironment = []struct{ code, means string }{
	{"KANDEV_HOME", "The home of sessions, logs and config (default ~/.kandev); --home wins."},
	{"KANDEV_HOLDER", "Who holds an attach lease when --holder is not given."},
	{"NO_COLOR", "No colours, as --no-color."},
	{"CI", "When set and not empty, owners do not linger after their turn."},
}

func writeManFlags(b *strings.Builder, flags []*kong.Flag) {
	for _, f := range flags {
		if f.Hidden {
			continue
		}
		fmt.Fprintf(b, ".TP\n\\fB%s\\fR\n%s\n", roffText(f.String()), roffText(f.Help))
	}
}

// roffParagraphs is text as roff paragraphs, one per blank-line-separated block.
func roffParagraphs(s string) string {
	var b strings.Builder
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			b.WriteString(".PP\n" + roffText(p) + "\n")
		}
	}
	return b.String()
}

// roffText escapes text for roff: backslashes and hyphens, and a line that
// would start with a control character (. or ').
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffQuote is s as one quoted roff argument.
func roffQuote(s string) string {
	return `"` + strings.ReplaceAll(roffText(s), `"`, `""`) + `"`
}
