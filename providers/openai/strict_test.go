package openai

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
)

func TestStrictSchema(t *testing.T) {
	parse := func(s string) *jsonschema.Schema {
		t.Helper()
		var sch jsonschema.Schema
		if err := json.Unmarshal([]byte(s), &sch); err != nil {
			t.Fatal(err)
		}
		return &sch
	}
	for _, c := range []struct{ name, in, want string }{
		{"optional becomes nullable; unsupported keywords dropped",
			`{"type":"object","properties":{"a":{"type":"string","minLength":2,"format":"uri","default":"x"},"b":{"type":"integer","minimum":0},"c":{"enum":["x","y"]}},"required":["b"]}`,
			`{"type":"object","required":["a","b","c"],"properties":{"a":{"type":["string","null"]},"b":{"type":"integer","minimum":0},"c":{"enum":["x","y",null]}},"additionalProperties":false}`},
		{"$ref and anyOf, oneOf as anyOf, $defs made strict",
			`{"type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}}}},"properties":{"p":{"$ref":"#/$defs/P"},"u":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["u"]}`,
			`{"type":"object","$defs":{"P":{"type":"object","required":["x"],"properties":{"x":{"type":["number","null"]}},"additionalProperties":false}},"required":["p","u"],"properties":{"p":{"anyOf":[{"$ref":"#/$defs/P"},{"type":"null"}]},"u":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"additionalProperties":false}`},
		{"a map cannot be strict", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`, ``},
		{"an untyped property cannot be strict", `{"type":"object","properties":{"any":{}}}`, ``},
		{"allOf cannot be strict", `{"type":"object","allOf":[{"type":"object"}]}`, ``},
		{"the root must be an object", `{"type":"array","items":{"type":"string"}}`, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := parse(c.in)
			before, _ := json.Marshal(in)
			got, ok := strictSchema(in)
			if after, _ := json.Marshal(in); string(after) != string(before) {
				t.Fatalf("the input changed:\n%s\n%s", before, after)
			}
			if c.want == "" {
				if ok {
					b, _ := json.Marshal(got)
					t.Fatalf("made strict: %s", b)
				}
				return
			}
			if !ok {
				t.Fatal("not strict")
			}
			var g, w any
			b, _ := json.Marshal(got)
			_ = json.Unmarshal(b, &g)
			_ = json.Unmarshal([]byte(c.want), &w)
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if string(gb) != string(wb) {
				t.Fatalf("got  %s\nwant %s", gb, wb)
			}
		})
	}
	// Inferred Go schemas: structs are strict, maps and interfaces are not.
	type inner struct {
		N *int `json:"n"`
	}
	type rec struct {
		Name  string   `json:"name"`
		Tags  []string `json:"tags,omitempty"`
		Inner inner    `json:"inner"`
	}
	if strictFor(runlet.OutputFor[rec]().Schema) == nil {
		t.Error("a struct schema is not strict")
	}
	if strictFor(runlet.OutputFor[struct {
		M map[string]int `json:"m"`
	}]().Schema) != nil {
		t.Error("a map field is strict")
	}
}
