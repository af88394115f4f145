package acp

import (
	"reflect"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestElicitationContent_TypesTheValueByTheSchemaAndSaysWhatIsWanted(t *testing.T) {
	one := func(prop map[string]any) sdk.UnstableElicitationSchema {
		return sdk.UnstableElicitationSchema{Properties: map[string]any{"v": prop}, Required: []string{"v"}}
	}
	two := sdk.UnstableElicitationSchema{Properties: map[string]any{"a": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"}}, Required: []string{"a"}}
	both := sdk.UnstableElicitationSchema{Properties: map[string]any{"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}}, Required: []string{"a", "b"}}
	for _, c := range []struct {
		name   string
		schema sdk.UnstableElicitationSchema
		value  string
		want   map[string]any
		err    string
	}{
		{"string", one(map[string]any{"type": "string"}), "blue sky", map[string]any{"v": "blue sky"}, ""},
		{"integer", one(map[string]any{"type": "integer"}), " 42 ", map[string]any{"v": int64(42)}, ""},
		{"not an integer", one(map[string]any{"type": "integer"}), "4.2", nil, "wants an integer"},
		{"number", one(map[string]any{"type": "number"}), "4.5", map[string]any{"v": 4.5}, ""},
		{"boolean", one(map[string]any{"type": "boolean"}), "yes", map[string]any{"v": true}, ""},
		{"not a boolean", one(map[string]any{"type": "boolean"}), "maybe", nil, "yes or no"},
		{"enum", one(map[string]any{"type": "string", "enum": []any{"red", "blue"}}), "blue", map[string]any{"v": "blue"}, ""},
		{"outside the enum", one(map[string]any{"type": "string", "enum": []any{"red", "blue"}}), "green", nil, "one of red, blue"},
		{"array", one(map[string]any{"type": "array"}), "a, b", map[string]any{"v": []any{"a", "b"}}, ""},
		{"the one required field", two, "x", map[string]any{"a": "x"}, ""},
		{"a JSON object", two, `{"a": "x", "n": "3"}`, map[string]any{"a": "x", "n": int64(3)}, ""},
		{"a JSON object lacking a required field", two, `{"n": 3}`, nil, `lacks the required field "a"`},
		{"an unknown field", two, `{"a": "x", "z": 1}`, nil, `no field "z"`},
		{"several fields, one value", both, "x", nil, "answer with a JSON object"},
	} {
		got, err := ElicitationContent(c.schema, c.value)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, %v; want %#v", c.name, got, err, c.want)
		}
	}
}
