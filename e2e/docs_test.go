package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
)

// The examples of README.md and docs/*.md run as written (docs/testing.md,
// "Examples that run", says how they are found and marked).

// docExample is one runnable command line of the docs, with where it is.
type docExample struct {
	file  string
	line  int
	group string // examples of one group run in order in one home
	cmd   string
	// fails: the doc shows it printing a "kandev: ..." error.
	fails bool
	// needs names what it needs that the test machine lacks (a real agent).
	needs string
}

// docFiles are README.md and every docs/*.md file.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md found: %v", err)
	}
	return append([]string{filepath.Join("..", "README.md")}, files...)
}

var (
	needsComment = regexp.MustCompile(`#\s*needs:\s*([^#]+)$`)
	needsMarker  = regexp.MustCompile(`<!--\s*needs:\s*(.*?)\s*-->`)
	skipMarker   = regexp.MustCompile(`<!--\s*docs-test:\s*skip\b(.*?)-->`)
	tableExample = regexp.MustCompile("`(kandev [^`]*)`")
)

// docExamples finds the runnable examples of one file: in fenced blocks,
// every "$ kandev ..." line and, in sh blocks, every line that starts with
// "kandev "; in tables, code spans "kandev ..." without [optional] parts.
func docExamples(t *testing.T, file string) []docExample {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docExample
	var fence, prev, blockNeeds string
	inBlock, skip := false, false
	block := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if !inBlock {
				inBlock, fence, block = true, strings.TrimPrefix(trimmed, "```"), block+1
				skip = skipMarker.MatchString(prev)
				blockNeeds = ""
				if m := needsMarker.FindStringSubmatch(prev); m != nil {
					blockNeeds = m[1]
				}
			} else {
				inBlock = false
			}
			prev = line
			continue
		}
		group := fmt.Sprintf("%s block %d", filepath.Base(file), block)
		switch {
		case inBlock && skip:
		case inBlock && strings.HasPrefix(line, "$ kandev "):
			out = append(out, docExample{file: file, line: n, group: group, cmd: strings.TrimPrefix(line, "$ "), needs: blockNeeds})
		case inBlock && strings.HasPrefix(line, "kandev ") && (fence == "sh" || fence == "bash"):
			out = append(out, docExample{file: file, line: n, group: group, cmd: line, needs: blockNeeds})
		case inBlock && len(out) > 0 && out[len(out)-1].group == group && strings.HasPrefix(line, "kandev: "):
			out[len(out)-1].fails = true // the output shown under it is an error
		case !inBlock && strings.HasPrefix(trimmed, "|") && !skipMarker.MatchString(line):
			needs := ""
			if m := needsMarker.FindStringSubmatch(line); m != nil {
				needs = m[1]
			}
			for _, cell := range strings.Split(line, "|") {
				// A cell that is nothing but "kandev ..." code spans is an
				// example column; a span inside prose is a mention.
				if strings.Trim(tableExample.ReplaceAllString(cell, ""), " ,;") != "" {
					continue
				}
				for _, m := range tableExample.FindAllStringSubmatch(cell, -1) {
					if strings.ContainsAny(m[1], "[]") || strings.Contains(m[1], "...") {
						continue // a synopsis, not an example
					}
					out = append(out, docExample{file: file, line: n, group: fmt.Sprintf("%s line %d", filepath.Base(file), n), cmd: m[1], needs: needs})
				}
			}
		}
		prev = line
	}
	for i := range out {
		if m := needsComment.FindStringSubmatch(out[i].cmd); m != nil {
			out[i].needs = strings.TrimSpace(m[1])
		}
	}
	return out
}

var (
	docSessionID = regexp.MustCompile(`\b(ID|2026\d{4}-[0-9a-f]{4,6}(-[0-9a-f]{8})?)\b`)
	docTurnSeq   = regexp.MustCompile(`(--to|--at) \d+`)
)

// docWorld is a fresh home with what the examples talk about: a git
// repository with notes.txt, and a session that remembered PINEAPPLE and
// heard of the lexer.
type docWorld struct {
	*world
	id  string
	seq int64 // a turn boundary of the session (turn_ended)
}

func newDocWorld(t *testing.T) *docWorld {
	t.Helper()
	return newDocWorldIn(t, "project")
}

// newDocWorldIn is newDocWorld whose project directory is named project.
func newDocWorldIn(t *testing.T, project string) *docWorld {
	t.Helper()
	w := newWorld(t)
	os.Chmod(w.home, 0o700) // as kandev makes a home (doctor checks it)
	repo := namedRepo(t, project)
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("the notes of the project\n"), 0o644)
	// The project's remote, for the push and pull examples (a bare repository by path).
	origin := filepath.Join(t.TempDir(), "origin.git")
	for _, args := range [][]string{{"init", "-q", "--bare", origin}, {"-C", repo, "remote", "add", "origin", origin}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	fakeHome := t.TempDir()
	// Where examples write beside the kandev home (a completion script).
	os.MkdirAll(filepath.Join(fakeHome, ".config", "fish", "completions"), 0o755)
	w.env = append(w.env, "CI=1", "HOME="+fakeHome, "PATH="+filepath.Dir(kandevBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	w.cwd = repo
	id, r := w.start("remember PINEAPPLE")
	if r.code != 0 {
		t.Fatal(r)
	}
	w.mustRun("prompt", id, "the lexer now skips a torn token")
	dw := &docWorld{world: w, id: id}
	for _, e := range w.events(id) {
		if e.Type == eventlog.EventTurnEnded {
			dw.seq = e.Seq
			break
		}
	}
	return dw
}

// sh runs one example line through the shell, as a reader would paste it.
func (w *docWorld) sh(line string) result {
	w.t.Helper()
	cmd := docSessionID.ReplaceAllString(line, w.id)
	cmd = docTurnSeq.ReplaceAllStringFunc(cmd, func(m string) string { return strings.Fields(m)[0] + fmt.Sprint(" ", w.seq) })
	return w.runShell(cmd)
}

func (w *world) runShell(cmdline string) result {
	w.t.Helper()
	c := exec.Command("sh", "-c", cmdline)
	c.Dir, c.Env = w.cwd, w.env
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	c.Stdin = nil
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("sh -c %q: %v", cmdline, err)
	}
	return result{out.String(), errb.String(), code}
}

func TestDocs_EveryCommandExampleRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("SKIP: no sh to run the examples with")
	}
	var total atomic.Int64 // each group runs in its own home, in parallel
	t.Cleanup(func() { t.Logf("%d examples run", total.Load()) })
	for _, file := range docFiles(t) {
		examples := docExamples(t, file)
		groups := map[string][]docExample{}
		var order []string
		for _, ex := range examples {
			if _, ok := groups[ex.group]; !ok {
				order = append(order, ex.group)
			}
			groups[ex.group] = append(groups[ex.group], ex)
		}
		for _, g := range order {
			t.Run(g, func(t *testing.T) {
				t.Parallel()
				w := newDocWorld(t)
				defer func() { // nothing an example started lingers
					for _, s := range w.sessions() {
						w.run("close", s)
					}
				}()
				for _, ex := range groups[g] {
					where := fmt.Sprintf("%s:%d: %s", ex.file, ex.line, ex.cmd)
					if ex.needs != "" {
						t.Logf("not run (needs %s): %s", ex.needs, where)
						continue
					}
					total.Add(1)
					r := w.sh(ex.cmd)
					switch {
					case ex.fails && !strings.Contains(r.stderr, "kandev: "):
						t.Errorf("%s\nthe doc shows an error, but none was printed\n%s", where, r)
					case !ex.fails && r.code != 0:
						t.Errorf("%s\nexit %d (mark an example that needs a real agent with `# needs: NAME`)\n%s", where, r.code, r)
					}
				}
			})
		}
	}
}

// sessions lists the ids in the home.
func (w *world) sessions() []string {
	var l struct{ Sessions []struct{ ID string } }
	r := w.run("--json", "list")
	if json.Unmarshal([]byte(r.stdout), &l) != nil {
		return nil
	}
	ids := make([]string, len(l.Sessions))
	for i, s := range l.Sessions {
		ids[i] = s.ID
	}
	return ids
}

// Every ```toml block parses as TOML and loads as a kandev config.
func TestDocs_EveryTOMLExampleIsAValidConfig(t *testing.T) {
	t.Parallel()
	blocks := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```toml" {
				continue
			}
			start := i + 1
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				body = append(body, lines[i])
			}
			blocks++
			text := strings.Join(body, "\n") + "\n"
			where := fmt.Sprintf("%s:%d", file, start)
			var any map[string]any
			if _, err := toml.Decode(text, &any); err != nil {
				t.Errorf("%s: not TOML: %v", where, err)
				continue
			}
			path := filepath.Join(t.TempDir(), "config.toml")
			os.WriteFile(path, []byte(text), 0o600)
			if _, err := config.LoadConfig(path, true); err != nil {
				t.Errorf("%s: kandev's config loader refuses it: %v", where, err)
				continue
			}
			w := newWorld(t)
			if r := w.run("--config", path, "list"); r.code != 0 {
				t.Errorf("%s: kandev --config refuses it:\n%s", where, r)
			}
		}
	}
	if blocks == 0 {
		t.Fatal("no ```toml block found in the docs")
	}
}

// Every top-level command of `kandev --help` has its row in one of the task
// tables of docs/commands.md and its section in the generated
// docs/reference.md (commands' TestReference_DocsPageMatchesTheCommandModel
// keeps that page up to date).
func TestDocs_CommandsMDNamesEveryCommand(t *testing.T) {
	t.Parallel()
	help, err := exec.Command(kandevBin, "--help").Output()
	if err != nil {
		t.Fatalf("kandev --help: %v", err)
	}
	var cmds []string
	inCommands := false
	for _, l := range strings.Split(string(help), "\n") {
		if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") { // a group of commands, or the flags
			inCommands = !strings.HasSuffix(l, "Flags:") && !strings.HasSuffix(l, "flags:")
			continue
		}
		if inCommands && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			cmds = append(cmds, strings.Fields(l)[0])
		}
	}
	if len(cmds) < 30 {
		t.Fatalf("found only %d commands in kandev --help:\n%s", len(cmds), help)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	guide, ref := read("commands.md"), read("reference.md")
	for _, c := range cmds {
		if !strings.Contains(guide, "\n| `"+c+"` |") {
			t.Errorf("docs/commands.md has no task-table row for `kandev %s` (| `%s` | what it does | example |)", c, c)
		}
		if !strings.Contains(ref, "\n### kandev "+c+"\n") {
			t.Errorf("docs/reference.md has no section for `kandev %s` (regenerate it: go run . __reference > docs/reference.md)", c)
		}
	}
	t.Logf("%d commands checked", len(cmds))
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of README.md and docs/*.md names a file that exists
// and, with #anchor, a heading of that file.
func TestDocs_EveryRelativeLinkResolves(t *testing.T) {
	t.Parallel()
	anchors := map[string]map[string]bool{} // file -> heading slugs
	slugsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		anchors[file] = a
		b, err := os.ReadFile(file)
		if err != nil {
			return a
		}
		inBlock := false
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inBlock = !inBlock
			}
			if inBlock || !strings.HasPrefix(l, "#") {
				continue
			}
			slug := headingSlug(strings.TrimLeft(l, "#"))
			for n := 1; a[slug]; n++ { // GitHub numbers repeated headings
				slug = fmt.Sprintf("%s-%d", headingSlug(strings.TrimLeft(l, "#")), n)
			}
			a[slug] = true
		}
		return a
	}
	links := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inBlock := false
		for n, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inBlock = !inBlock
			}
			if inBlock {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %s: no such file", file, n+1, target)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !slugsOf(dest)[anchor] {
					t.Errorf("%s:%d: link %s: no heading with that anchor in %s", file, n+1, target, dest)
				}
			}
		}
	}
	t.Logf("%d relative links checked", links)
}

// headingSlug is the anchor GitHub gives a heading: lower case, spaces as
// hyphens, punctuation other than - and _ dropped.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
