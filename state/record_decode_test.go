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
func fullRecord(t testing.TB) *Session {
	t.Helper()
	s := &Session{}
	fillField(t, reflect.ValueOf(s).Elem(), "Session")
	s.Unknown = map[string]json.RawMessage{"written_by_newer": json.RawMessage(`{"a":[1,2]}`)}
	s.Capabilities = json.RawMessage(`{"agentCapabilities":{"loadSession":true},"protocolVersion":1}`)
	s.Format = Format
	return s
}

// fillField sets v, and every field within it, to a value that is not zero.
func fillField(t testing.TB, v reflect.Value, name string) {
	t.Helper()
	switch {
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 1, 5, 9, 0, len(name), 1234, time.UTC)))
	case v.Type() == reflect.TypeFor[json.RawMessage](), v.Type() == reflect.TypeFor[map[string]json.RawMessage]():
		// set by the caller
	case v.Type() == reflect.TypeFor[map[string]string]():
		v.Set(reflect.ValueOf(map[string]string{"a of " + name: "1", "b": "två"}))
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

// Every field of a record, nested ones included, is read by the one pass:
// a field left to encoding/json costs every command that reads one record
// encoding/json's first use. A new field of a kind the pass does not know
// shows up here.
func TestDecodeRecord_NoFieldIsLeftToEncodingJSON(t *testing.T) {
	var walk func(fs *recordFieldSet, path string)
	walk = func(fs *recordFieldSet, path string) {
		for _, f := range fs.order {
			p := f.plan
			for p.kind == kindSlice || p.kind == kindMap {
				p = p.elem
			}
			switch p.kind {
			case kindOther:
				t.Errorf("%s.%s is read by encoding/json", path, f.name)
			case kindStruct:
				if fields := p.sub(); fields != nil {
					walk(fields, path+"."+f.name)
				} else {
					t.Errorf("%s.%s is read by encoding/json", path, f.name)
				}
			}
		}
	}
	walk(recordFields(), "session")
}

// oddRecords are records kandev does not write but may find: each must
// read exactly as encoding/json reads it.
var oddRecords = []string{
	// A slice given twice: encoding/json decodes the second array into the
	// elements of the first, keeping the fields it does not overwrite.
	`{"id":"a","mcp_config":[{"name":"x","command":"c","args":["1","2"]}],"mcp_config":[{"name":"y"}]}`,
	`{"id":"a","mcp_config":[{"name":"x"},{"name":"z","command":"q"}],"mcp_config":[{"name":"y"}],"mcp_config":[{"name":"y"},{"name":"w"}]}`,
	`{"id":"a","agent_command":["a","b"],"agent_command":["c"]}`,
	`{"id":"a","setup":{"model":"m","mcp_servers":["x","z"]},"setup":{"mcp_servers":["y"]}}`,
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
	// nested objects and arrays
	`{"id":"a","worktree":{"path":"p","PATH":"q"}}`,
	`{"id":"a","worktree":{"path":"p"},"worktree":{"branch":"b"}}`,
	`{"id":"a","worktree":{"path":"p","future":[1,{"x":2}]}}`,
	`{"id":"a","worktree":{"pa\u0074h":"p"}}`,
	`{"id":"a","worktree":{"path":"p\n"}}`,
	`{"id":"a","worktree":[1]}`,
	`{"id":"a","worktree":"p"}`,
	`{"id":"a","worktree":{"valid":1}}`,
	`{"id":"a","usage":{"used":1.5,"size":2}}`,
	`{"id":"a","usage":{"used":3,"cost":{"amount":0.25,"currency":"USD"}}}`,
	`{"id":"a","usage":{"cost":{"amount":"1"}}}`,
	`{"id":"a","usage":{"cost":{"amount":1e400}}}`,
	`{"id":"a","usage":{"cost":{"amount":-0,"currency":null}}}`,
	`{"id":"a","usage":{"cost":null,"tokens":{"input":1}}}`,
	`{"id":"a","usage_count":{"closed":1e-7,"amount":12345678901234567890}}`,
	`{"id":"a","setup":{"options":{"k":"v","k":"w"}}}`,
	`{"id":"a","setup":{"options":{"k":"v"}},"setup":{"options":{"j":"u"}}}`,
	`{"id":"a","setup":{"options":{"k\"":"v"}}}`,
	`{"id":"a","setup":{"options":{"k":null}}}`,
	`{"id":"a","setup":{"options":null,"mcp_servers":[]}}`,
	`{"id":"a","setup":{"options":{}}}`,
	`{"id":"a","setup":{"options":{"k":1}}}`,
	`{"id":"a","setup":{"mcp_servers":["x",null]}}`,
	`{"id":"a","mcp_config":[{"name":"x","env":{"A":"1"},"args":["-v"]},null]}`,
	`{"id":"a","mcp_config":[]}`,
	`{"id":"a","mcp_config":{}}`,
	`{"id":"a","restart_attempts":["2026-01-01T00:00:00Z",null]}`,
	`{"id":"a","restart_attempts":["soon"]}`,
	`{"id":"a","restart_attempts":[1]}`,
	`{"id":"a","warm_until":null}`,
	`{"id":"a","warm_until":"2026-01-01T00:00:00+02:00"}`,
	`{"id":"a","warm_until":"2026-01-01"}`,
	`{"id":"a","warm_until":5}`,
	`{"id":"a","usage_limit":{"reached_at":"2026-01-01T00:00:00Z","reset_at":"bad"}}`,
	`{"id":"a","usage_limit":{"reset_at":null,"scheduled":{"at":"2026-01-01T00:00:00Z","via":"at","handle":"7"}}}`,
	`{"id":"a","parked_requests":[{"request_id":"r","requested_at":"2026-01-01T00:00:00Z"},null]}`,
	`{"id":"a","parked_requests":[{"Request_ID":"r"}]}`,
	`{"id":"a","pause":{"kind":"limit","reason":"r","turn":"t1"},"interrupted_turn":{"turn":"t2","maintenance":true}}`,
	`{"id":"a","rewind_pending":{"epoch":2,"to_seq":9007199254740993}}`,
	`{"id":"a","rewind_pending":{"epoch":2147483648000000000000}}`,
}

func TestDecodeRecord_OddRecordsReadAsEncodingJSONReadsThem(t *testing.T) {
	for _, rec := range oddRecords {
		sameAsEncodingJSON(t, rec)
	}
}

// FuzzDecodeRecord_ReadsAsEncodingJSON looks for a record the one pass
// reads otherwise than encoding/json (go test -fuzz=FuzzDecodeRecord ./state).
func FuzzDecodeRecord_ReadsAsEncodingJSON(f *testing.F) {
	for _, rec := range oddRecords {
		f.Add(rec)
	}
	b, err := encodeRecord(fullRecord(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Fuzz(sameAsEncodingJSON)
}

// sameAsEncodingJSON fails t when decodeRecord reads rec otherwise than
// encoding/json does, or fails otherwise.
func sameAsEncodingJSON(t *testing.T, rec string) {
	if CheckNesting([]byte(rec)) != nil {
		return // refused before either decoder reads it (a guard of kandev's own)
	}
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

type (
	ownJSON   struct{ A string }
	ownText   string
	embeds    struct{ Worktree }
	stringOpt struct {
		N int `json:"n,string"`
	}
	untagged struct{ A string }
	plain    struct {
		A string `json:"a"`
		//lint:ignore U1000 an unexported field, which neither decoder reads
		b string
	}
)

func (*ownJSON) UnmarshalJSON([]byte) error { return nil }
func (*ownText) UnmarshalText([]byte) error { return nil }

// Types the one pass would read otherwise than encoding/json are left to it.
func TestPlanFor_LeavesToEncodingJSONWhatItReadsItsOwnWay(t *testing.T) {
	for _, tc := range []struct {
		t    reflect.Type
		pass bool // read by the one pass
	}{
		{reflect.TypeFor[ownJSON](), false},
		{reflect.TypeFor[*ownJSON](), false},
		{reflect.TypeFor[ownText](), false},
		{reflect.TypeFor[[]ownText](), false},
		{reflect.TypeFor[embeds](), false},
		{reflect.TypeFor[stringOpt](), false},
		{reflect.TypeFor[untagged](), false},
		{reflect.TypeFor[map[string]int](), false},
		{reflect.TypeFor[[]byte](), false},
		{reflect.TypeFor[any](), false},
		{reflect.TypeFor[plain](), true},
		{reflect.TypeFor[*plain](), true},
		{reflect.TypeFor[[]plain](), true},
		{reflect.TypeFor[*time.Time](), true},
		{reflect.TypeFor[map[string]string](), true},
	} {
		p := planFor(tc.t)
		for p.kind == kindSlice || p.kind == kindMap {
			p = p.elem
		}
		pass := p.kind != kindOther && (p.kind != kindStruct || p.sub() != nil)
		if pass != tc.pass {
			t.Errorf("%s: read by the one pass %v, want %v", tc.t, pass, tc.pass)
		}
	}
}
