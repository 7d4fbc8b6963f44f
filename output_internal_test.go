package runlet

import (
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// allowsNull follows a cycle of anyOf and $ref a bounded depth; it
// overflowed the stack (a fatal error, not a panic) before.
func TestAllowsNullInRecursiveAnyOf(t *testing.T) {
	root := &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"a": {Ref: "#/$defs/r"}},
		Defs: map[string]*jsonschema.Schema{"r": {AnyOf: []*jsonschema.Schema{
			{Type: "string"}, {Ref: "#/$defs/r"},
		}}}}
	if !allowsNull(root.Properties["a"], root, 0) {
		t.Error("a cycle too deep to follow: null must be kept for the validator")
	}
	v := map[string]any{"a": nil}
	dropOptionalNulls(v, root, root, 0)
	if _, ok := v["a"]; !ok {
		t.Error("the null was dropped")
	}
	for _, tc := range []struct {
		s    *jsonschema.Schema
		want bool
	}{
		{&jsonschema.Schema{}, true},
		{&jsonschema.Schema{Type: "string"}, false},
		{&jsonschema.Schema{Types: []string{"string", "null"}}, true},
		{&jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "null"}}}, true},
		{&jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}}}, false},
		{&jsonschema.Schema{Enum: []any{"a"}}, false},
		{&jsonschema.Schema{Ref: "#/$defs/missing"}, true},
	} {
		if got := allowsNull(tc.s, root, 0); got != tc.want {
			t.Errorf("allowsNull(%+v) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
