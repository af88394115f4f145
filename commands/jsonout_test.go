package commands

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// jsonNames are the JSON names of t's fields in order (embedded structs
// spliced in, as encoding/json does), each with ",omitempty" when it has it.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			names = append(names, jsonNames(ft)...)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "omitempty") {
			name += ",omitempty"
		}
		names = append(names, name)
	}
	return names
}

// The --json objects' field names are what scripts read: a rename, a
// dropped field or a field that starts or stops being omitted fails here.
func TestJSONOutputs_FieldNamesAreTheOnesScriptsRead(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{errorOutput{}, "error"},
		{errorInfo{}, "code message"},
		{agentsOutput{}, "agents"},
		{agentRow{}, "name command installed default install_hint native_resume history_injection resume_flag,omitempty capabilities,omitempty probe_error,omitempty"},
		{answerOutput{}, "allowed always answer request_id session_id"},
		{sessionOutput{}, "session"},
		{controlOutput{}, "delivered_to,omitempty repair,omitempty requested session_id"},
		{closeOutput{}, "closed session_id unscheduled,omitempty"},
		{closeAllOutput{}, "closed"},
		{detachOutput{}, "detached session_id"},
		{doctorOutput{}, "checks ok"},
		{check{}, "name ok message fix"},
		{eventsOutput{}, "events"},
		{forkOutput{}, "fork session"},
		{forkInfo{}, "fallback_reason forked_at method parent_id"},
		{importOutput{}, "import session"},
		{importInfo{}, "events file original_id"},
		{listOutput{}, "sessions"},
		{promptQueuedOutput{}, "queued"},
		{queuedInput{}, "input_id session_id"},
		{pruneOutput{}, "agent_sessions_deleted containers_removed dry_run fork_logs pruned temp_files worktrees_removed"},
		{recapOutput{}, "recap"},
		{recoverOutput{}, "recovered"},
		{recoverOutcome{}, "id outcome error,omitempty"},
		{repairOutput{}, "repair"},
		{resumeOutput{}, "attach restore session"},
		{resumeAttach{}, "attach_expires_at attached_at attached_to session_id"},
		{resumeRestore{}, "fallback_reason method"},
		{rewindOutput{}, "files_rewound rewind"},
		{searchOutput{}, "results"},
		{setOutput{}, "applied not_offered,omitempty queued session_id setup steps,omitempty"},
		{setTitleOutput{}, "session_id title"},
		{statusOutput{}, "children container,omitempty session status sync,omitempty"},
		{Status{}, "needs_resume is_resumable reason badge attachable attached_to attach_expires_at owner_pid pending_inputs warm_until,omitempty permission_requests,omitempty interrupted paused,omitempty pause,omitempty next trust,omitempty survivors,omitempty"},
		{syncOutput{}, "errors,omitempty sessions"},
		{transcriptPage{}, "entries has_older next_before_sequence limit"},
		{trustOutput{}, "mcp_servers session_id trusted was_pending"},
		{trustedServer{}, "name type,omitempty command,omitempty args,omitempty env_names,omitempty env,omitempty url,omitempty header_names,omitempty headers,omitempty reads_env,omitempty"},
		{usageOutput{}, "usage"},
		{usageReport{}, "by groups since,omitempty total"},
		{usageRow{}, "key,omitempty agent,omitempty sessions turns_with_usage cost,omitempty tokens,omitempty used,omitempty size,omitempty limit,omitempty"},
	}
	for _, tc := range cases {
		typ := reflect.TypeOf(tc.v)
		if got := strings.Join(jsonNames(typ), " "); got != tc.want {
			t.Errorf("%s fields:\n got %s\nwant %s", typ.Name(), got, tc.want)
		}
	}
	listedNames := jsonNames(reflect.TypeOf(listed{}))
	for _, want := range []string{"id", "state", "badge", "problem,omitempty", "warm_until,omitempty"} {
		if !slices.Contains(listedNames, want) {
			t.Errorf("list rows lack %q: %v", want, listedNames)
		}
	}
}

// The objects that were built as maps print their keys sorted, as maps
// did: the same bytes for a script that compares them.
func TestJSONOutputs_ObjectsKeepTheKeyOrderTheyAlwaysHad(t *testing.T) {
	sorted := []any{errorOutput{}, errorInfo{}, agentsOutput{}, answerOutput{}, sessionOutput{}, controlOutput{},
		closeOutput{}, closeAllOutput{}, detachOutput{}, doctorOutput{}, eventsOutput{}, forkOutput{}, forkInfo{},
		importOutput{}, importInfo{}, listOutput{}, promptQueuedOutput{}, queuedInput{}, pruneOutput{}, recapOutput{},
		recoverOutput{}, repairOutput{}, resumeOutput{}, resumeAttach{}, resumeRestore{}, rewindOutput{}, setOutput{}, setTitleOutput{},
		statusOutput{}, syncOutput{}, trustOutput{}, usageOutput{}, usageReport{}}
	for _, v := range sorted {
		var names []string
		for _, n := range jsonNames(reflect.TypeOf(v)) {
			names = append(names, strings.TrimSuffix(n, ",omitempty"))
		}
		if !slices.IsSorted(names) {
			t.Errorf("%T: fields %v are not in the order of their names", v, names)
		}
	}
}

// Every path of the registry is a command kandev has, and every command
// that prints an object with --json is in it.
func TestJSONOutputs_NameRealCommands(t *testing.T) {
	p, err := kong.New(&CLI{})
	if err != nil {
		t.Fatal(err)
	}
	commands := map[string]bool{}
	for _, n := range p.Model.Children {
		commands[n.Name] = true
	}
	outs := jsonOutputs()
	for path, v := range outs {
		word, _, _ := strings.Cut(path, " ")
		if !commands[word] {
			t.Errorf("%q is no kandev command", path)
		}
		if reflect.TypeOf(v).Kind() != reflect.Struct {
			t.Errorf("%q: %T is not a struct", path, v)
		}
	}
	for _, c := range []string{"status", "list", "prompt", "resume", "start", "set", "trust", "doctor", "wait", "usage", "events", "stop", "cancel"} {
		if outs[c] == nil {
			t.Errorf("%s is not in jsonOutputs", c)
		}
	}
}
