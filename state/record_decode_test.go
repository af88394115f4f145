package state

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// fullRecord is a session with every field set, nested ones included, so
// that a field the one-pass decoder stores wrongly (or a new kind of field
// it does not know) shows up as a difference.
func fullRecord(t *testing.T) *Session {
	t.Helper()
	s := &Session{}
	fillField(t, reflect.ValueOf(s).Elem(), "Session")
	s.Unknown = map[string]json.RawMessage{"written_by_newer": json.RawMessage(`{"a":[1,2]}`)}
	s.Capabilities = json.RawMessage(`{"agentCapabilities":{"loadSession":true},"protocolVersion":1}`)
	s.Format = Format
	return s
}

// fillField sets v, and every field within it, to a value that is not zero.
func fillField(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 1, 5, 9, 0, len(name), 1234, time.UTC)))
	case v.Type() == reflect.TypeFor[json.RawMessage](), v.Kind() == reflect.Map:
		// set by the caller
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fillField(t, v.Field(i), name+"."+f.Name)
			}
		}
	case v.Kind() == reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillField(t, v.Elem(), name)
	case v.Kind() == reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fillField(t, v.Index(0), name+"[0]")
		fillField(t, v.Index(1), name+"[1]")
	case v.Kind() == reflect.String:
		v.SetString("value of " + name + ": ünïcode")
	case v.CanInt():
		v.SetInt(int64(1000 + len(name)))
	case v.CanFloat():
		v.SetFloat(0.25 + float64(len(name)))
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("%s (%s) is not filled by this test: add its kind", name, v.Type())
	}
}

func TestDecodeRecord_OnePassReadsEveryFieldAsEncodingJSON(t *testing.T) {
	want := fullRecord(t)
	b, err := encodeRecord(want)
	if err != nil {
		t.Fatal(err)
	}
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
	if again, _ := encodeRecord(&fast); string(again) != string(b) {
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
