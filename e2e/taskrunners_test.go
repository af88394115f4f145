package e2e_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The editor tasks of docs/task-runners.md: every JSON block parses as strict
// JSON, every XML block with encoding/xml, and each task's command runs with
// the editor's variables filled in, against the demo agent in a docs world.

// taskSelection stands for the text selected in the editor.
const taskSelection = "why does the lexer skip a torn token"

// taskExpect is what each task of the page prints on stdout, by label; a task
// whose label is missing here fails the test, so a new one says what it shows.
var taskExpect = map[string]string{
	"kandev: resume latest":         "restored",
	"kandev: prompt with selection": "echo: " + taskSelection,
	"kandev: recap":                 "PINEAPPLE",
}

// A task as the test runs it: argv (no shell) or a shell line, in dir.
type editorTask struct {
	editor, label, dir, shell string
	argv                      []string
	matcher                   string // a VS Code problem matcher's regexp, if any
}

func fencedBlocks(t *testing.T, file, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```"+lang:
			in, cur = true, nil
		case in && strings.HasPrefix(strings.TrimSpace(line), "```"):
			in = false
			out = append(out, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return out
}

// strictJSON decodes one JSON value and refuses trailing text.
func strictJSON(text string, v any) error {
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return &json.SyntaxError{Offset: dec.InputOffset()}
	}
	return nil
}

func editorTasks(t *testing.T, project string) []editorTask {
	t.Helper()
	file := filepath.Join("..", "docs", "task-runners.md")
	var tasks []editorTask
	vscode := strings.NewReplacer("${workspaceFolder}", project, "${selectedText}", taskSelection)
	zed := strings.NewReplacer("${ZED_WORKTREE_ROOT}", project, "$ZED_WORKTREE_ROOT", project,
		"${ZED_SELECTED_TEXT}", taskSelection, "$ZED_SELECTED_TEXT", taskSelection)
	jetbrains := strings.NewReplacer("$PROJECT_DIR$", project, "$ProjectFileDir$", project, "$SelectedText$", taskSelection)
	for _, block := range fencedBlocks(t, file, "json") {
		if strings.HasPrefix(strings.TrimSpace(block), "[") { // Zed: an array of tasks
			var zt []struct {
				Label, Command, Cwd string
				Args                []string
			}
			if err := strictJSON(block, &zt); err != nil {
				t.Fatalf("%s: a Zed tasks.json that is not strict JSON: %v\n%s", file, err, block)
			}
			for _, z := range zt {
				line := zed.Replace(strings.Join(append([]string{z.Command}, z.Args...), " "))
				tasks = append(tasks, editorTask{editor: "zed", label: z.Label, dir: zed.Replace(z.Cwd), shell: line})
			}
			continue
		}
		var vt struct {
			Version string
			Tasks   []struct {
				Label, Type, Command string
				Args                 []string
				Options              struct{ Cwd string }
				ProblemMatcher       json.RawMessage
			}
		}
		if err := strictJSON(block, &vt); err != nil {
			t.Fatalf("%s: a VS Code tasks.json that is not strict JSON: %v\n%s", file, err, block)
		}
		if vt.Version != "2.0.0" || len(vt.Tasks) == 0 {
			t.Fatalf("%s: a JSON block that is neither a Zed task list nor a VS Code tasks.json (version 2.0.0):\n%s", file, block)
		}
		for _, v := range vt.Tasks {
			if v.Type != "process" {
				t.Errorf("VS Code task %q: type %q; the page's tasks are process tasks (no shell)", v.Label, v.Type)
			}
			et := editorTask{editor: "vscode", label: v.Label, dir: vscode.Replace(v.Options.Cwd), argv: []string{v.Command}}
			for _, a := range v.Args {
				et.argv = append(et.argv, vscode.Replace(a))
			}
			var pm struct{ Pattern struct{ Regexp string } }
			if len(v.ProblemMatcher) > 0 && v.ProblemMatcher[0] == '{' {
				if err := json.Unmarshal(v.ProblemMatcher, &pm); err != nil {
					t.Errorf("VS Code task %q: problemMatcher: %v", v.Label, err)
				}
				et.matcher = pm.Pattern.Regexp
			} else if s := string(v.ProblemMatcher); s != "[]" && s != "" {
				t.Errorf("VS Code task %q: problemMatcher %s: name none that VS Code does not define", v.Label, s)
			}
			tasks = append(tasks, et)
		}
	}
	for _, block := range fencedBlocks(t, file, "xml") {
		var root struct {
			XMLName xml.Name
			Config  struct {
				Name    string `xml:"name,attr"`
				Type    string `xml:"type,attr"`
				Options []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"option"`
			} `xml:"configuration"`
			Tools []struct {
				Name    string `xml:"name,attr"`
				Options []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"exec>option"`
			} `xml:"tool"`
		}
		if err := xml.Unmarshal([]byte(block), &root); err != nil {
			t.Fatalf("%s: XML that encoding/xml refuses: %v\n%s", file, err, block)
		}
		switch root.XMLName.Local {
		case "component": // a run configuration
			opt := map[string]string{}
			for _, o := range root.Config.Options {
				opt[o.Name] = o.Value
			}
			if root.Config.Type != "ShConfigurationType" {
				t.Errorf("run configuration %q: type %q, want ShConfigurationType (Shell Script)", root.Config.Name, root.Config.Type)
			}
			tasks = append(tasks, editorTask{editor: "jetbrains run configuration", label: root.Config.Name,
				dir: jetbrains.Replace(opt["SCRIPT_WORKING_DIRECTORY"]), shell: jetbrains.Replace(opt["SCRIPT_TEXT"])})
		case "toolSet": // external tools: PARAMETERS split as a command line
			for _, tool := range root.Tools {
				opt := map[string]string{}
				for _, o := range tool.Options {
					opt[o.Name] = o.Value
				}
				tasks = append(tasks, editorTask{editor: "jetbrains external tool", label: tool.Name,
					dir: jetbrains.Replace(opt["WORKING_DIRECTORY"]), shell: jetbrains.Replace(opt["COMMAND"] + " " + opt["PARAMETERS"])})
			}
		default:
			t.Fatalf("%s: an XML block whose root is <%s>, neither a run configuration nor external tools", file, root.XMLName.Local)
		}
	}
	return tasks
}

// runTask runs a task as its editor would: argv directly, or its line through sh.
func (w *world) runTask(et editorTask, dir string) result {
	w.t.Helper()
	args := []string{"-c", et.shell}
	if et.shell == "" {
		args = append([]string{"-c", `exec "$0" "$@"`}, et.argv...) // PATH looked up in the world's env
	}
	c := exec.Command("sh", args...)
	c.Dir, c.Env = dir, w.env
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s task %q: %v", et.editor, et.label, err)
	}
	return result{out.String(), errb.String(), code}
}

// matchingLines runs a VS Code problem matcher's regexp (JavaScript syntax)
// over lines with node and returns those it matches.
func matchingLines(t *testing.T, re string, lines []string) []string {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"re": re, "lines": lines})
	script := `const i = JSON.parse(require("fs").readFileSync(0, "utf8")); const re = new RegExp(i.re);
console.log(JSON.stringify(i.lines.filter(l => re.test(l))));`
	c := exec.Command("node", "-e", script)
	c.Stdin = strings.NewReader(string(in))
	out, err := c.Output()
	if err != nil {
		t.Fatalf("node ran the matcher %q: %v", re, err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node's answer %q: %v", out, err)
	}
	return got
}

func TestDocs_EveryTaskRunnerExampleParsesAndItsCommandRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("SKIP: no sh to run the tasks with")
	}
	// A project path with a space: the workspace the --latest notice names has one.
	w := newDocWorldIn(t, "my project")
	defer func() {
		for _, s := range w.sessions() {
			w.run("close", s)
		}
	}()
	tasks := editorTasks(t, w.cwd)
	seen := map[string]int{}
	for _, et := range tasks {
		seen[et.editor]++
		want, ok := taskExpect[et.label]
		if !ok {
			t.Errorf("%s task %q: not in taskExpect (say what it prints)", et.editor, et.label)
			continue
		}
		r := w.runTask(et, et.dir)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("%s task %q in %s: want exit 0 and %q on stdout\n%s", et.editor, et.label, et.dir, want, r)
			continue
		}
		if et.label == "kandev: resume latest" && !strings.Contains(r.stdout, resumeQuote(t, w.id)) {
			t.Errorf("%s task %q: its output does not start as the page quotes it (%q)\n%s", et.editor, et.label, resumeQuote(t, w.id), r)
		}
		if !strings.Contains(r.stderr, `kandev: session `+w.id) {
			t.Errorf("%s task %q: stderr does not name the session --latest picked\n%s", et.editor, et.label, r)
		}
		if et.matcher == "" {
			continue
		}
		if _, err := exec.LookPath("node"); err != nil {
			t.Logf("SKIP: no node to run the problem matcher of %q", et.label)
			continue
		}
		// The --latest notice is no problem; a failure in a folder with no
		// session is one, with its exit code.
		if got := matchingLines(t, et.matcher, strings.Split(strings.TrimSpace(r.stderr), "\n")); len(got) != 0 {
			t.Errorf("%s task %q: its problem matcher reports a problem for a successful run: %q", et.editor, et.label, got)
		}
		empty := t.TempDir()
		f := w.runTask(et, empty)
		if f.code != 4 {
			t.Errorf("%s task %q in a folder with no session: want exit 4 (not found)\n%s", et.editor, et.label, f)
		}
		errLine := strings.TrimSpace(f.stderr)
		if got := matchingLines(t, et.matcher, []string{errLine}); len(got) != 1 {
			t.Errorf("%s task %q: its problem matcher misses the error line %q", et.editor, et.label, errLine)
		}
	}
	for _, ed := range []string{"vscode", "zed", "jetbrains run configuration", "jetbrains external tool"} {
		if seen[ed] == 0 {
			t.Errorf("docs/task-runners.md has no %s example", ed)
		}
	}
	t.Logf("%d tasks run: %v", len(tasks), seen)
}

// resumeQuote is the start of resume's output as docs/task-runners.md quotes
// it, for session id.
func resumeQuote(t *testing.T, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "task-runners.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`(session ID restored [^`]*)`").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/task-runners.md quotes no `session ID restored ...` line of resume")
	}
	return strings.TrimSuffix(strings.Replace(string(m[1]), "ID", id, 1), "...")
}
