package state

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// fullRecord is a session with every field set, so that a field the
// one-pass decoder stores wrongly (or a new kind of field it does not
// know) shows up as a difference.
func fullRecord(t *testing.T) *Session {
	t.Helper()
	s := &Session{}
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		name := v.Type().Field(i).Name
		switch {
		case name == "Capabilities":
			f.SetBytes([]byte(`{"agentCapabilities":{"loadSession":true},"protocolVersion":1}`))
		case name == "Unknown":
			s.Unknown = map[string]json.RawMessage{"written_by_newer": json.RawMessage(`{"a":[1,2]}`)}
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(time.Date(2026, 1, 5, 9, 0, i, 1234, time.UTC)))
		case f.Kind() == reflect.String:
			f.SetString(fmt.Sprintf("value of %s: ünïcode", name))
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			f.SetInt(int64(1000 + i))
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case name == "AgentCommand":
			s.AgentCommand = []string{"{kandev}", "demo-agent"}
		case name == "Worktree":
			s.Worktree = &Worktree{Path: "/src/repo", Branch: "main", Valid: true}
		case name == "Pause":
			s.Pause = &Pause{Kind: PauseStopped, Reason: "why", Turn: "t3"}
		case name == "Interrupted":
			s.Interrupted = &Interruption{Turn: "t3", PermissionOpen: true}
		case name == "RestartAttempts":
			s.RestartAttempts = []time.Time{time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
		default:
			t.Fatalf("field %s (%s) is not filled by this test: add it", name, f.Type())
		}
	}
	s.Format = Format
	return s
}

func TestDecodeRecord_OnePassReadsEveryFieldAsEncodingJSON(t *testing.T) {
	want := fullRecord(t)
	b := encodeRecord(want)
	var fast Session
	if err := decodeRecordFast(b, &fast); err != nil {
		t.Fatalf("the one-pass decoder gave up on a record kandev wrote: %v", err)
	}
	var slow Session
	if err := decodeRecordJSON(b, &slow); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&fast, &slow) {
		t.Fatalf("one pass:\n%+v\nencoding/json:\n%+v", fast, slow)
	}
	// Raw values come back indented as written; the record itself round-trips.
	if again := encodeRecord(&fast); string(again) != string(b) {
		t.Fatalf("rewritten:\n%s\nwritten:\n%s", again, b)
	}
}

func TestDecodeRecord_OddRecordsReadAsEncodingJSONReadsThem(t *testing.T) {
	for _, rec := range []string{
		`{"id":"a","title":"tab\tand \"quotes\" and \u00e9"}`,
		`{"id":"a","ID":"b"}`,
		`{"id":"a","turns":1.5}`,
		`{"id":"a","turns":"3"}`,
		`{"id":"a","state":5}`,
		`{"id":"a","stopped":"yes"}`,
		`{"id":"a","title":null,"worktree":null,"capabilities":null,"turns":null}`,
		`{"id":"a","created_at":"yesterday"}`,
		`{"id":"a","title":"` + "\xff" + `"}`,
		`{"id":"a",`,
		`[1,2]`,
		`{"id":"a","id":"b","future":{"x":1}}`,
		`{"id":"a","agent_command":[]}`,
		`{"id":"a","agent_command":["a\"b","c"]}`,
		`{"id":"a","agent_command":null}`,
		`{"id":"a","agent_command":[1]}`,
		`{"id":"a","agent_command":"x"}`,
	} {
		var got, want Session
		gotErr := decodeRecord([]byte(rec), &got)
		wantErr := decodeRecordJSON([]byte(rec), &want)
		if wantErr == nil {
			upgradeRecord(&want)
		}
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%s: error %v, encoding/json says %v", rec, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", rec, got, want)
		}
	}
}
