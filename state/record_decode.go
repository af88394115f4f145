package state

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// A record is decoded in one pass over its keys (gjson), each value stored
// into its field by the field's kind: listing ten thousand sessions decodes
// ten thousand records, and encoding/json's reflection walk was most of it.
// Whatever that pass is not sure to read exactly as encoding/json would (a
// type mismatch, an escaped or invalid string, a key in another case, a
// document that is not an object) makes it give up, and the record is read
// by encoding/json instead, with encoding/json's error when it is corrupt.

// fieldKind is how a record value is stored into a Session field.
type fieldKind int

const (
	kindString fieldKind = iota
	kindInt
	kindBool
	kindStrings // []string
	kindRaw     // json.RawMessage: the value as written
	kindOther   // time.Time, pointers, slices: encoding/json on the value alone
)

type recordField struct {
	name  string // in JSON
	index int
	kind  fieldKind
}

// recordFieldSet is the Session fields by JSON name, and in the order
// encoding/json writes them.
type recordFieldSet struct {
	byName map[string]recordField
	order  []recordField
}

// find returns the field named key. Records are written in field order, so
// the key is first looked for among the few fields after the one found
// last (*next), which spares hashing each of a record's keys.
func (fs *recordFieldSet) find(key string, next *int) (recordField, bool) {
	for i := *next; i < min(*next+4, len(fs.order)); i++ {
		if fs.order[i].name == key {
			*next = i + 1
			return fs.order[i], true
		}
	}
	f, ok := fs.byName[key]
	return f, ok
}

// recordFields maps the JSON name of each Session field to how it is stored.
var recordFields = sync.OnceValue(func() *recordFieldSet {
	fs := &recordFieldSet{byName: map[string]recordField{}}
	t := reflect.TypeFor[Session]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		kind := kindOther
		switch {
		case f.Type == reflect.TypeFor[json.RawMessage]():
			kind = kindRaw
		case f.Type == reflect.TypeFor[[]string]():
			kind = kindStrings
		case f.Type.Kind() == reflect.String:
			kind = kindString
		case f.Type.Kind() == reflect.Int || f.Type.Kind() == reflect.Int64:
			kind = kindInt
		case f.Type.Kind() == reflect.Bool:
			kind = kindBool
		}
		rf := recordField{name: name, index: i, kind: kind}
		fs.byName[name] = rf
		fs.order = append(fs.order, rf)
	}
	return fs
})

// errSlowPath: the one-pass decoder leaves this record to encoding/json.
var errSlowPath = errors.New("record needs encoding/json")

// decodeRecordFast fills s from b in one pass, or returns errSlowPath with
// s in an unspecified state.
func decodeRecordFast(b []byte, s *Session) error {
	if !gjson.ValidBytes(b) || !utf8.Valid(b) {
		return errSlowPath
	}
	doc := gjson.Parse(string(b)) // one copy: every string of s shares it
	if !doc.IsObject() {
		return errSlowPath
	}
	fields := recordFields()
	v := reflect.ValueOf(s).Elem()
	var err error
	next := 0
	doc.ForEach(func(key, value gjson.Result) bool {
		f, ok := fields.find(key.Str, &next)
		if !ok {
			err = keepUnknown(s, fields.byName, key.Str, value)
		} else {
			err = storeField(v.Field(f.index), f.kind, value)
		}
		return err == nil
	})
	return err
}

// keepUnknown keeps a key this kandev does not know in s.Unknown, unless
// encoding/json would have read it into a field (it matches names in any case).
func keepUnknown(s *Session, fields map[string]recordField, key string, value gjson.Result) error {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return errSlowPath
		}
	}
	if s.Unknown == nil {
		s.Unknown = map[string]json.RawMessage{}
	}
	s.Unknown[key] = json.RawMessage(value.Raw)
	return nil
}

// storeField stores one value as encoding/json would, or returns errSlowPath.
func storeField(f reflect.Value, kind fieldKind, value gjson.Result) error {
	if value.Type == gjson.Null && kind != kindRaw { // a RawMessage keeps null as written
		switch f.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			f.SetZero() // encoding/json's nil
		}
		return nil // encoding/json leaves any other field as it is
	}
	switch kind {
	case kindString:
		if value.Type != gjson.String || strings.IndexByte(value.Raw, '\\') >= 0 {
			return errSlowPath
		}
		f.SetString(value.Raw[1 : len(value.Raw)-1])
	case kindInt:
		n, err := strconv.ParseInt(value.Raw, 10, 64)
		if value.Type != gjson.Number || err != nil || f.OverflowInt(n) {
			return errSlowPath
		}
		f.SetInt(n)
	case kindBool:
		if value.Type != gjson.True && value.Type != gjson.False {
			return errSlowPath
		}
		f.SetBool(value.Type == gjson.True)
	case kindRaw:
		f.SetBytes([]byte(value.Raw))
	case kindStrings:
		return storeStrings(f, value)
	default:
		if t, ok := f.Addr().Interface().(*time.Time); ok && value.Type == gjson.String {
			if t.UnmarshalJSON([]byte(value.Raw)) != nil {
				return errSlowPath
			}
			return nil
		}
		if json.Unmarshal([]byte(value.Raw), f.Addr().Interface()) != nil {
			return errSlowPath
		}
	}
	return nil
}

// storeStrings stores an array of plain strings (a command line).
func storeStrings(f reflect.Value, value gjson.Result) error {
	if !value.IsArray() {
		return errSlowPath
	}
	var out []string
	var err error
	value.ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.String || strings.IndexByte(v.Raw, '\\') >= 0 {
			err = errSlowPath
			return false
		}
		out = append(out, v.Raw[1:len(v.Raw)-1])
		return true
	})
	if err != nil {
		return err
	}
	if out == nil {
		out = []string{}
	}
	f.Set(reflect.ValueOf(out))
	return nil
}
