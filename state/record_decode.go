package state

import (
	"encoding"
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
// into its field by the field's kind, nested objects and arrays included:
// listing ten thousand sessions decodes ten thousand records, and
// encoding/json's reflection walk was most of it; and a command that reads
// one record pays encoding/json's first use (some 0.1 ms of a 4 ms `kandev
// status`) for nothing. Whatever that pass is not sure to read exactly as
// encoding/json would (a type mismatch, an escaped or invalid string, a key
// in another case, a document that is not an object) makes it give up, and
// the record is read by encoding/json instead, with encoding/json's error
// when it is corrupt.

// fieldKind is how a record value is stored into a field.
type fieldKind int

const (
	kindString fieldKind = iota
	kindInt              // int, int64
	kindFloat            // float64
	kindBool
	kindRaw    // json.RawMessage: the value as written
	kindTime   // time.Time (or a pointer to one): its UnmarshalJSON
	kindStruct // a struct (or a pointer to one): its fields one by one
	kindSlice  // a slice of any kind here
	kindMap    // map[string]string
	kindOther  // anything else: encoding/json on the value alone
)

// fieldPlan is how one value is stored: its kind, whether the field points
// to it, and for structs, slices and maps what is inside.
type fieldPlan struct {
	kind fieldKind
	ptr  bool // a pointer to the value (kindTime, kindStruct)
	// sub is a struct's fields (kindStruct), planned when a record first
	// holds one (most records hold few of the nested kinds); nil when
	// encoding/json reads that struct.
	sub  func() *recordFieldSet
	elem *fieldPlan // kindSlice, kindMap: an element
}

type recordField struct {
	name  string // in JSON
	index int
	plan  *fieldPlan
}

// recordFieldSet is a struct's fields by JSON name, and in the order
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

// folds says whether encoding/json would read key into one of the fields
// although no field has that exact name (it matches names in any case).
func (fs *recordFieldSet) folds(key string) bool {
	for name := range fs.byName {
		if strings.EqualFold(name, key) {
			return true
		}
	}
	return false
}

// recordFields maps the JSON name of each Session field to how it is stored.
var recordFields = sync.OnceValue(func() *recordFieldSet {
	return planStruct(reflect.TypeFor[Session]())
})

// planStruct is the field set of struct type t, nil when encoding/json
// would read t in a way the one pass does not follow (embedded fields,
// ",string" options, a field without a JSON name of its own).
func planStruct(t reflect.Type) *recordFieldSet {
	fs := &recordFieldSet{byName: map[string]recordField{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, tagged := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous || !tagged || name == "" || name == "-" || strings.Contains(opts, "string"):
			return nil
		}
		rf := recordField{name: name, index: i, plan: planFor(f.Type)}
		fs.byName[name] = rf
		fs.order = append(fs.order, rf)
	}
	return fs
}

// planFor is how a value of type t is stored.
func planFor(t reflect.Type) *fieldPlan {
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return &fieldPlan{kind: kindRaw}
	case t == reflect.TypeFor[time.Time]():
		return &fieldPlan{kind: kindTime}
	case t.Kind() == reflect.Struct:
		return &fieldPlan{kind: kindStruct, sub: sync.OnceValue(func() *recordFieldSet {
			if unmarshals(t) {
				return nil
			}
			return planStruct(t)
		})}
	case t.Name() != "" && unmarshals(t):
		return &fieldPlan{kind: kindOther}
	}
	switch t.Kind() {
	case reflect.String:
		return &fieldPlan{kind: kindString}
	case reflect.Int, reflect.Int64:
		return &fieldPlan{kind: kindInt}
	case reflect.Float64:
		return &fieldPlan{kind: kindFloat}
	case reflect.Bool:
		return &fieldPlan{kind: kindBool}
	case reflect.Pointer:
		if p := planFor(t.Elem()); !p.ptr && (p.kind == kindTime || p.kind == kindStruct) {
			return &fieldPlan{kind: p.kind, ptr: true, sub: p.sub}
		}
	case reflect.Slice:
		if e := planFor(t.Elem()); e.kind != kindOther && e.kind != kindRaw {
			return &fieldPlan{kind: kindSlice, elem: e}
		}
	case reflect.Map:
		if t.Key() == reflect.TypeFor[string]() && t.Elem() == reflect.TypeFor[string]() {
			return &fieldPlan{kind: kindMap, elem: &fieldPlan{kind: kindString}}
		}
	}
	return &fieldPlan{kind: kindOther}
}

// unmarshals says whether encoding/json reads a value of named type t by
// its own method rather than by its kind.
func unmarshals(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.NumMethod() > 0 && (p.Implements(reflect.TypeFor[json.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()))
}

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
			err = keepUnknown(s, fields, key.Str, value)
		} else {
			err = storeField(v.Field(f.index), f.plan, value)
		}
		return err == nil
	})
	return err
}

// keepUnknown keeps a key this kandev does not know in s.Unknown, unless
// encoding/json would have read it into a field.
func keepUnknown(s *Session, fields *recordFieldSet, key string, value gjson.Result) error {
	if fields.folds(key) {
		return errSlowPath
	}
	if s.Unknown == nil {
		s.Unknown = map[string]json.RawMessage{}
	}
	s.Unknown[key] = json.RawMessage(value.Raw)
	return nil
}

// storeField stores one value as encoding/json would, or returns errSlowPath.
func storeField(f reflect.Value, plan *fieldPlan, value gjson.Result) error {
	if value.Type == gjson.Null && plan.kind != kindRaw { // a RawMessage keeps null as written
		switch f.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			f.SetZero() // encoding/json's nil
		}
		return nil // encoding/json leaves any other field as it is
	}
	if plan.ptr {
		// encoding/json fills the value a pointer already points to (a
		// key given twice), else a new one.
		if f.IsNil() {
			f.Set(reflect.New(f.Type().Elem()))
		}
		f = f.Elem()
	}
	switch plan.kind {
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
	case kindFloat:
		n, err := strconv.ParseFloat(value.Raw, 64)
		if value.Type != gjson.Number || err != nil {
			return errSlowPath
		}
		f.SetFloat(n)
	case kindBool:
		if value.Type != gjson.True && value.Type != gjson.False {
			return errSlowPath
		}
		f.SetBool(value.Type == gjson.True)
	case kindRaw:
		f.SetBytes([]byte(value.Raw))
	case kindTime:
		if value.Type != gjson.String || f.Addr().Interface().(*time.Time).UnmarshalJSON([]byte(value.Raw)) != nil {
			return errSlowPath
		}
	case kindStruct:
		if fields := plan.sub(); fields != nil {
			return storeStruct(f, fields, value)
		}
		return storeJSON(f, value)
	case kindSlice:
		return storeSlice(f, plan.elem, value)
	case kindMap:
		return storeMap(f, plan.elem, value)
	default:
		return storeJSON(f, value)
	}
	return nil
}

// storeJSON stores a value the one pass does not read by encoding/json.
func storeJSON(f reflect.Value, value gjson.Result) error {
	if json.Unmarshal([]byte(value.Raw), f.Addr().Interface()) != nil {
		return errSlowPath
	}
	return nil
}

// storeStruct stores an object into struct f field by field; a key no
// field has is dropped, as encoding/json drops it.
func storeStruct(f reflect.Value, fields *recordFieldSet, value gjson.Result) error {
	if !value.IsObject() {
		return errSlowPath
	}
	var err error
	next := 0
	value.ForEach(func(key, v gjson.Result) bool {
		if strings.IndexByte(key.Raw, '\\') >= 0 {
			err = errSlowPath
		} else if sf, ok := fields.find(key.Str, &next); ok {
			err = storeField(f.Field(sf.index), sf.plan, v)
		} else if fields.folds(key.Str) {
			err = errSlowPath
		}
		return err == nil
	})
	return err
}

// storeSlice stores an array into slice f: a new slice, empty but not nil
// for [], as encoding/json makes it. A slice already there (its key given
// twice) is left to encoding/json, which decodes into the elements it holds
// and keeps what the second array does not overwrite.
func storeSlice(f reflect.Value, elem *fieldPlan, value gjson.Result) error {
	if !value.IsArray() || !f.IsNil() {
		return errSlowPath
	}
	out := reflect.MakeSlice(f.Type(), 0, 0)
	var err error
	value.ForEach(func(_, v gjson.Result) bool {
		out = reflect.Append(out, reflect.Zero(f.Type().Elem()))
		err = storeField(out.Index(out.Len()-1), elem, v)
		return err == nil
	})
	if err != nil {
		return err
	}
	f.Set(out)
	return nil
}

// storeMap stores an object into map f, adding to the map already there
// (a key given twice) as encoding/json does.
func storeMap(f reflect.Value, elem *fieldPlan, value gjson.Result) error {
	if !value.IsObject() {
		return errSlowPath
	}
	if f.IsNil() {
		f.Set(reflect.MakeMap(f.Type()))
	}
	var err error
	value.ForEach(func(key, v gjson.Result) bool {
		if strings.IndexByte(key.Raw, '\\') >= 0 {
			err = errSlowPath
			return false
		}
		e := reflect.New(f.Type().Elem()).Elem()
		if err = storeField(e, elem, v); err == nil {
			f.SetMapIndex(reflect.ValueOf(key.Str), e)
		}
		return err == nil
	})
	return err
}
