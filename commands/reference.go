package commands

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/kandev/kandev/state"
)

// referenceCmd is the hidden `kandev __reference`: it prints
// docs/reference.md from the same command model as --help and the man page,
// and from the exit-code table, so the reference never drifts from the
// binary. Regenerate the page with: go run . __reference > docs/reference.md
type referenceCmd struct{}

func (c *referenceCmd) readsOnly() bool { return true }

// Run prints the page.
func (c *referenceCmd) Run(env *Env, k *kong.Context) error {
	return writeReference(env.Out.Out, k.Model)
}

// referenceCommand is the command that rewrites docs/reference.md.
const referenceCommand = "go run . __reference > docs/reference.md"

// jsonVariants is the --json output of the command at cmdPath (its words
// after "kandev", e.g. "status") and of each flag that changes its shape
// ("close --all"), from jsonOutputs, in that order: the one hook through
// which the reference lists each command's typed --json output.
func jsonVariants(cmdPath string) (variants []string, outputs []any) {
	all := jsonOutputs()
	if v, ok := all[cmdPath]; ok {
		variants, outputs = append(variants, ""), append(outputs, v)
	}
	var flags []string
	for k := range all {
		if rest, ok := strings.CutPrefix(k, cmdPath+" --"); ok {
			flags = append(flags, rest)
		}
	}
	sort.Strings(flags)
	for _, f := range flags {
		variants, outputs = append(variants, "--"+f), append(outputs, all[cmdPath+" --"+f])
	}
	return variants, outputs
}

// sessionType is the session record, which several commands print whole:
// the reference lists its fields once.
var sessionType = reflect.TypeOf(state.Session{})

// jsonFieldList renders t's JSON fields as `name` type, following embedded
// structs as encoding/json does.
func jsonFieldList(t reflect.Type) string {
	var parts []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				walk(ft)
				continue
			}
			if name == "" {
				name = f.Name
			}
			parts = append(parts, "`"+name+"` "+jsonKind(ft))
		}
	}
	walk(t)
	return strings.Join(parts, ", ")
}

// jsonKind names t as JSON does.
func jsonKind(t reflect.Type) string {
	switch {
	case t == sessionType:
		return "session"
	case t == reflect.TypeOf(time.Time{}):
		return "time"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list"
	}
	return "object"
}

// jsonLine is a command's "With --json" line for one of its outputs.
func jsonLine(variant string, out any) string {
	with := "With `--json`"
	if variant != "" {
		with = "With `--json " + variant + "`"
	}
	t := reflect.TypeOf(out)
	if t == sessionType {
		return with + ": the [session object](#the-session-object).\n\n"
	}
	return with + ": " + jsonFieldList(t) + ".\n\n"
}

// writeReference renders app as Markdown: the global flags, the shared
// ones, each visible command under its group with its usage, help,
// arguments, flags and --json fields, then the exit codes and the
// environment. The help's examples are left to docs/commands.md.
func writeReference(w io.Writer, app *kong.Application) error {
	var b strings.Builder
	b.WriteString("# Command reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from the command model by `%s`; do not edit by hand. -->\n\n", referenceCommand)
	b.WriteString("Every command and flag as `kandev COMMAND --help` prints them, then the exit codes. ")
	b.WriteString("[commands.md](commands.md) says which command to reach for.\n\n")
	b.WriteString("## Global flags\n\nEvery command takes these, before or after its name.\n\n")
	b.WriteString(flagTable(flagRows(app.Flags), nil))
	// An argument or flag several commands take alike is described once.
	rowsOf := func(cmd *kong.Node) []flagRow {
		var rows []flagRow
		for _, a := range cmd.Positional {
			rows = append(rows, flagRow{a.Summary(), fmt.Sprintf("- `%s`: %s\n", a.Summary(), markdownCell(a.Help))})
		}
		return append(rows, flagRows(cmd.Flags)...)
	}
	seen := map[string]int{}
	var shared []string
	for _, cmd := range app.Leaves(true) {
		for _, r := range rowsOf(cmd) {
			if seen[r.row]++; seen[r.row] == sharedFlagMin {
				shared = append(shared, r.row)
			}
		}
	}
	b.WriteString("## Shared arguments and flags\n\nThose several commands take alike; a command's \"Also:\" line names those it takes.\n\n")
	b.WriteString(strings.Join(shared, "") + "\n")
	group := ""
	for _, cmd := range app.Leaves(true) {
		if g := cmd.ClosestGroup(); g != nil && g.Title != group {
			group = g.Title
			fmt.Fprintf(&b, "## %s\n\n", strings.TrimSuffix(group, ":"))
		}
		path := strings.TrimPrefix(cmd.Path(), app.Name+" ")
		fmt.Fprintf(&b, "### kandev %s\n\n", path)
		fmt.Fprintf(&b, "`%s %s`\n\n", app.Name, strings.TrimSuffix(cmd.Summary(), " [flags]"))
		prose := helpProse(cmd.Detail)
		if !strings.HasPrefix(prose, strings.TrimSuffix(cmd.Help, ".")) {
			b.WriteString(markdownText(cmd.Help) + "\n\n") // else the prose says it
		}
		if prose != "" {
			b.WriteString(markdownText(prose) + "\n\n")
		}
		var own []flagRow
		var also []string
		for _, r := range rowsOf(cmd) {
			if seen[r.row] >= sharedFlagMin {
				also = append(also, "`"+r.name+"`")
			} else {
				own = append(own, r)
			}
		}
		b.WriteString(flagTable(own, also))
		variants, outputs := jsonVariants(path)
		for i, v := range variants {
			b.WriteString(jsonLine(v, outputs[i]))
		}

	}
	b.WriteString("## The session object\n\nWhat `start`, `prompt`, `compact` and `events --follow` print last with `--json`, and what `list` and `status` hold for each session: " + jsonFieldList(sessionType) + ".\n\n")
	b.WriteString("## Exit codes\n\nThe same for every command. With `--json`, an error is also printed on stdout as `{\"error\": {\"code\": NAME, \"message\": TEXT}}`.\n\n")
	b.WriteString("| Exit | Name | Meaning |\n|---|---|---|\n")
	for _, e := range exitCodes {
		name := ""
		if e.name != "" {
			name = "`" + e.name + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", e.code, name, markdownCell(e.means))
	}
	b.WriteString("\n## Environment\n\n| Variable | Meaning |\n|---|---|\n")
	for _, e := range manEnvironment {
		fmt.Fprintf(&b, "| `%s` | %s |\n", e.code, markdownCell(e.means))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sharedFlagMin is how many commands take an argument or flag alike for it
// to be described once, under "Shared arguments and flags".
const sharedFlagMin = 3

// flagRow is one argument or visible flag as a list item.
type flagRow struct{ name, row string }

// flagRows are the visible flags as list items: the flag, its help, its
// default, choices and environment variable.
func flagRows(flags []*kong.Flag) []flagRow {
	var rows []flagRow
	for _, f := range flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		var notes []string
		if f.HasDefault && f.Default != "" && !(f.IsBool() && f.Default == "false") {
			notes = append(notes, "default `"+f.Default+"`")
		}
		if f.Enum != "" {
			notes = append(notes, "one of "+f.Enum)
		}
		for _, env := range f.Envs {
			notes = append(notes, "env `"+env+"`")
		}
		help := markdownCell(f.Help)
		if len(notes) > 0 {
			help += " (" + strings.Join(notes, "; ") + ")"
		}
		rows = append(rows, flagRow{"--" + f.Name, fmt.Sprintf("- `%s`: %s\n", f.String(), help)})
	}
	return rows
}

// flagTable is a command's arguments and own flags as a list, then the
// shared flags it takes.
func flagTable(rows []flagRow, also []string) string {
	var b strings.Builder
	if len(rows) > 0 {
		for _, r := range rows {
			b.WriteString(r.row)
		}
		b.WriteString("\n")
	}
	if len(also) > 0 {
		b.WriteString("Also: " + strings.Join(also, ", ") + ".\n\n")
	}
	return b.String()
}

// helpProse is a command's detailed help without its examples: the lines
// before the first that starts with "Example" (Example:, Example (in CI):).
// The examples are docs/commands.md's.
func helpProse(detail string) string {
	lines := strings.Split(strings.TrimSpace(detail), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "Example") {
			lines = lines[:i]
			break
		}
	}
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}

// markdownText is help text safe in Markdown prose: no HTML tags.
func markdownText(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(strings.TrimSpace(s))
}

// markdownCell is help text safe in one table cell.
func markdownCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(markdownText(s), "\n", " "), "|", `\|`)
}
