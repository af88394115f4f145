package state

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// fullRecord is a session with every field set, nested ones included, so
// that a field read back wrongly shows up as a difference.
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

// A record with every field set, and a key a newer kandev wrote, reads back
// as written and is rewritten byte for byte: no field of this kandev is taken
// for an unknown one, and the unknown one is kept.
func TestDecodeRecord_EveryFieldAndUnknownKeysRoundTrip(t *testing.T) {
	want := fullRecord(t)
	b, err := encodeRecord(want)
	if err != nil {
		t.Fatal(err)
	}
	var got Session
	if err := decodeRecord(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Unknown) != 1 || string(got.Unknown["written_by_newer"]) == "" {
		t.Fatalf("unknown keys read back as %v, want only written_by_newer", got.Unknown)
	}
	if again, _ := encodeRecord(&got); string(again) != string(b) {
		t.Fatalf("rewritten:\n%s\nwritten:\n%s", again, b)
	}
}

func TestChangedBy_ReportsWhatAWriteWouldChangeAndLeavesTheRecordAlone(t *testing.T) {
	s := fullRecord(t)
	s.TaskState = TaskStateFor(s.State) // as UpdateSession writes it
	before, err := encodeRecord(s)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		fn   func(*Session)
		want bool
	}{
		{"setting a field to the value it has changes nothing", func(c *Session) { c.TurnPermissionMode = s.TurnPermissionMode }, false},
		{"a nested value set again, as a new pointer, changes nothing", func(c *Session) { w := *s.Worktree; c.Worktree = &w }, false},
		{"a new value is a change", func(c *Session) { c.TurnPermissionMode += "-other" }, true},
		{"clearing a list is a change", func(c *Session) { c.ParkedRequests = nil }, true},
		{"a change made in place through a pointer is seen, and not made to s", func(c *Session) { c.Worktree.Path += "/x" }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := s.ChangedBy(c.fn); got != c.want {
				t.Errorf("ChangedBy = %v, want %v", got, c.want)
			}
			if after, _ := encodeRecord(s); string(after) != string(before) {
				t.Fatal("ChangedBy changed the record it was asked about")
			}
		})
	}
	// A write also sets the task state from the state: one out of step is a change.
	stale := fullRecord(t)
	stale.TaskState = "stale"
	if !stale.ChangedBy(func(*Session) {}) {
		t.Error("a record whose task state lags its state: ChangedBy = false, want true (the write sets it)")
	}
}
