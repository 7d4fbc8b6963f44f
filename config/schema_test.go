package config_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runlet/runlet/config"
)

// An output schema is checked whole before any model call: a type name
// that does not exist (jsonschema.Schema.Resolve lets it through), at any
// depth, is named by its path, with the name it probably meant.
func TestCheckOutputSchema(t *testing.T) {
	tests := []struct {
		schema, want string // want "" for a valid schema
	}{
		{`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, ""},
		{`{"type":["string","null"]}`, ""},
		{`{"type":"bogus"}`, `type: unknown type "bogus"`},
		{`{"type":"object","properties":{"age":{"type":"integr"}}}`, `properties.age.type: unknown type "integr"; did you mean "integer"?`},
		{`{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"nul"}]}}`, `items.anyOf.1.type: unknown type "nul"; did you mean "null"?`},
		{`{"$defs":{"a":{"type":["object","strng"]}}}`, `$defs.a.type: unknown type "strng"; did you mean "string"?`},
		{`{"type":"string","pattern":"("}`, "pattern"},
		{`{"$ref":"#/nope"}`, "nope"},
		{`{"type":"object","required":"name"}`, "not a JSON Schema"},
	}
	for _, tt := range tests {
		var m map[string]any
		if err := json.Unmarshal([]byte(tt.schema), &m); err != nil {
			t.Fatal(err)
		}
		err := config.CheckOutputSchema(m)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.schema, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: err = %v, want %q", tt.schema, err, tt.want)
		}
	}

	// Decode reports it, at the line of the type, with every other problem
	// (config_test.go's TestOneRound); Build, for a File changed in code.
	src := []byte("model: {provider: openai, name: m, api_key: k}\noutput_schema:\n  type: object\n  properties:\n    n: {type: numbr}\n")
	want := `output_schema: invalid JSON Schema: properties.n.type: unknown type "numbr"; did you mean "number"?`
	if _, err := (&config.Loader{}).Decode("a.yaml", src); err == nil || !strings.Contains(err.Error(), "a.yaml:3:3: "+want) {
		t.Errorf("Decode: %v, want %q", err, want)
	}
	f, err := (&config.Loader{}).Decode("a.yaml", []byte("model: {provider: openai, name: m, api_key: k}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.OutputSchema = map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "numbr"}}}
	if _, err := (&config.Loader{}).Build(f); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Build: %v, want %q", err, want)
	}
}
