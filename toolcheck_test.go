package runlet

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type quickIn struct {
	City  string            `json:"city"`
	Days  int               `json:"days,omitempty"`
	Temp  float64           `json:"temp,omitempty"`
	Units *string           `json:"units,omitempty"`
	Tags  []string          `json:"tags,omitempty"`
	Meta  map[string]int    `json:"meta,omitempty"`
	Inner struct{ A bool }  `json:"inner,omitzero"`
	Any   any               `json:"any,omitempty"`
	Raw   map[string]string `json:"raw,omitempty"`
}

func quickSchemas(t testing.TB) map[string]*jsonschema.Schema {
	enum := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"unit": {Type: "string", Enum: []any{"c", "f"}}, "n": {Type: "integer"}}, Required: []string{"unit"}}
	return map[string]*jsonschema.Schema{
		"inferred": SchemaFor[quickIn](),
		"enum":     enum,
		"open":     {Type: "object"},
		"nullable": {Type: "object", Properties: map[string]*jsonschema.Schema{"x": {Types: []string{"null", "number"}}}},
	}
}

// The quick check agrees with the full validator wherever it answers
// "valid", and answers it for the arguments models send.
func TestQuickSchema(t *testing.T) {
	schemas := quickSchemas(t)
	cases := []struct {
		schema, args string
		quick        bool // the quick check vouches for it
		valid        bool // the full validator accepts it
	}{
		{"inferred", `{"city":"Paris"}`, true, true},
		{"inferred", ` { "city" : "Paris" , "days" : 3 , "temp" : -1.5 } `, true, true},
		{"inferred", `{"city":"P\"aris","units":null,"tags":["a","b\n"],"meta":{"x":1},"inner":{"A":true},"any":[{"deep":[1,{}]}]}`, true, true},
		{"inferred", `{"city":"Paris","days":3.0}`, false, true},  // 3.0 is an integer: the full validator decides
		{"inferred", `{"c\u0069ty":"Paris"}`, false, true},        // escaped name: not sure
		{"inferred", `{"days":3}`, false, false},                  // city missing
		{"inferred", `{"city":"Paris","days":"3"}`, false, false}, // wrong type
		{"inferred", `{"city":"Paris","extra":1}`, false, false},  // additionalProperties false
		{"inferred", `{"city":"Paris","tags":[1]}`, false, false},
		{"inferred", `{"city":"Paris","meta":{"x":"y"}}`, false, false},
		{"inferred", `{"city":"Paris","inner":{"A":1}}`, false, false},
		{"inferred", `[]`, false, false},
		{"inferred", `"Paris"`, false, false},
		{"enum", `{"unit":"c","n":2}`, true, true},
		{"enum", `{"unit":"k"}`, false, false},
		{"enum", `{"unit":1}`, false, false},
		{"enum", `{"n":2}`, false, false},
		{"enum", `{"unit":"c","n":2.5}`, false, false},
		{"enum", `{"unit":"c","other":[true,false,null]}`, true, true},
		{"open", `{}`, true, true},
		{"open", `{"anything":{"goes":[1,2,"x"]}}`, true, true},
		{"nullable", `{"x":null}`, true, true},
		{"nullable", `{"x":"1"}`, false, false},
		{"nullable", `{"x":1e3}`, false, true}, // an exponent might overflow: not sure
	}
	for _, c := range cases {
		s := schemas[c.schema]
		q := compileQuick(s)
		if q == nil {
			t.Fatalf("%s: not compiled", c.schema)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal([]byte(c.args), &v); err != nil {
			t.Fatal(err)
		}
		valid := r.Validate(v) == nil
		if got := q.valid([]byte(c.args)); got != c.quick || valid != c.valid {
			t.Errorf("%s %s: quick %v, full %v; want %v, %v", c.schema, c.args, got, valid, c.quick, c.valid)
		}
	}
}

// Schemas beyond the subset are left to the full validator.
func TestQuickSchemaUnsupported(t *testing.T) {
	min := 1.0
	for name, s := range map[string]*jsonschema.Schema{
		"minimum":  {Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "number", Minimum: &min}}},
		"pattern":  {Type: "object", Properties: map[string]*jsonschema.Schema{"s": {Type: "string", Pattern: "^a"}}},
		"anyOf":    {Type: "object", AnyOf: []*jsonschema.Schema{{Required: []string{"a"}}}},
		"ref":      {Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Ref: "#"}}},
		"int enum": {Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Enum: []any{1.0}}}},
	} {
		if compileQuick(s) != nil {
			t.Errorf("%s: compiled", name)
		}
	}
}

// A tool's arguments are validated without allocating when they are valid.
// (Measured: 0 allocations for the inferred schema above; the full
// validator took about 30.)
func TestToolValidateAllocs(t *testing.T) {
	tool := NewTool("w", "", func(ctx context.Context, in quickIn) (string, error) { return in.City, nil }).(*funcTool)
	args := json.RawMessage(`{"city":"Shanghai","days":3,"tags":["a"],"meta":{"x":1}}`)
	// AllocsPerRun counts the whole process's allocations, so a goroutine
	// an earlier test left finishing can add to one measurement; the
	// least of three is validate's own.
	allocs := math.Inf(1)
	for range 3 {
		allocs = min(allocs, testing.AllocsPerRun(100, func() {
			if err := tool.validate(args); err != nil {
				t.Fatal(err)
			}
		}))
	}
	if allocs > 0 {
		t.Errorf("%.0f allocations per validation, want 0", allocs)
	}
	if err := tool.validate(json.RawMessage(`{"days":3}`)); err == nil {
		t.Error("missing required property accepted")
	}
}

// Whatever the quick check vouches for, the full validator accepts; no
// input makes it panic.
func FuzzQuickSchema(f *testing.F) {
	for _, s := range []string{`{"city":"Paris"}`, `{"city":"Paris","tags":["a"],"meta":{"x":1},"any":[[{}]]}`,
		`{"unit":"c","n":2}`, `{"x":null}`, `{"x":-0.5E+3}`, `[{"a":"\\"}]`, `{"city":"a\"b","inner":{"A":false}}`} {
		f.Add(s)
	}
	type compiled struct {
		q *quickSchema
		r *jsonschema.Resolved
	}
	var all []compiled
	for _, s := range quickSchemas(f) {
		r, err := s.Resolve(nil)
		if err != nil {
			f.Fatal(err)
		}
		all = append(all, compiled{compileQuick(s), r})
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) {
			return
		}
		var v any
		decodeErr := json.Unmarshal([]byte(args), &v) // a number beyond float64
		for _, c := range all {
			if c.q.valid([]byte(args)) {
				if decodeErr != nil {
					t.Fatalf("quick check accepted %s, which does not decode: %v", args, decodeErr)
				}
				if err := c.r.Validate(v); err != nil {
					t.Fatalf("quick check accepted %s: %v", args, err)
				}
			}
		}
	})
}
