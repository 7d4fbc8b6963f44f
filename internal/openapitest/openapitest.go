// Package openapitest validates JSON bodies against the component schemas of
// the official OpenAI OpenAPI document, so adapter tests can prove that every
// request they build is one the API accepts.
//
// It is a test-only helper: the 3 MB document is embedded from
// testdata/openai-openapi.yaml (see testdata/PROVENANCE.md) and parsed once
// per test binary, on first use.
//
//	openapitest.Validate(t, "CreateChatCompletionRequest", body)
//
// The document says "openapi: 3.1.0" but still uses OpenAPI 3.0 idioms that
// JSON Schema 2020-12 does not know. Before compiling, the schemas are
// rewritten so that they mean what the document intends:
//
//   - nullable: true wraps the schema as anyOf [{type: "null"}, schema];
//   - boolean exclusiveMinimum/exclusiveMaximum become the numeric 2020-12 form;
//   - $recursiveRef "#" (2019-09) becomes a $ref to the enclosing component,
//     and the boolean $recursiveAnchor is dropped;
//   - duplicate names in required are removed;
//   - $ref "#/components/schemas/X" becomes "#/$defs/X".
//
// OpenAPI-only keywords (discriminator, example, x-*) are annotations and are
// ignored. Formats are not asserted.
package openapitest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

//go:embed testdata/openai-openapi.yaml
var specYAML []byte

const docURL = "urn:runlet:openai-openapi.json"

var (
	loadOnce sync.Once
	loadErr  error
	compiler *jsonschema.Compiler
	defs     map[string]any

	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

// Validate fails t (with every violation listed) unless body is valid JSON
// that matches the named component schema, such as
// "CreateChatCompletionRequest" or "CreateResponse".
func Validate(t testing.TB, schema string, body []byte) {
	t.Helper()
	if err := Check(schema, body); err != nil {
		t.Errorf("body does not match %s:\n%v\nbody: %s", schema, err, clip(body))
	}
}

// Check returns nil if body is valid JSON matching the named component
// schema, and otherwise an error describing every violation. An unknown
// schema name is an error too.
func Check(schema string, body []byte) error {
	sch, err := Schema(schema)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openapitest: body is not JSON: %w", err)
	}
	return sch.Validate(inst)
}

// Schema returns the compiled component schema with the given name.
func Schema(name string) (*jsonschema.Schema, error) {
	loadOnce.Do(load)
	if loadErr != nil {
		return nil, loadErr
	}
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[name]; ok {
		return s, nil
	}
	if _, ok := defs[name]; !ok {
		return nil, fmt.Errorf("openapitest: no component schema %q in the OpenAPI document", name)
	}
	s, err := compiler.Compile(docURL + "#/$defs/" + name)
	if err != nil {
		return nil, fmt.Errorf("openapitest: compiling %s: %w", name, err)
	}
	compiled[name] = s
	return s, nil
}

func load() {
	var spec struct {
		Components struct {
			Schemas map[string]any `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(specYAML, &spec); err != nil {
		loadErr = fmt.Errorf("openapitest: parsing the OpenAPI document: %w", err)
		return
	}
	defs = make(map[string]any, len(spec.Components.Schemas))
	for name, s := range spec.Components.Schemas {
		defs[name] = rewrite(normalize(s), name)
	}
	doc := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$defs":   defs,
	}
	// Round-trip through JSON so the validator sees exactly the value types
	// it expects (json.Number, map[string]any, []any).
	raw, err := json.Marshal(doc)
	if err != nil {
		loadErr = fmt.Errorf("openapitest: converting the OpenAPI document: %w", err)
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		loadErr = fmt.Errorf("openapitest: converting the OpenAPI document: %w", err)
		return
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, v); err != nil {
		loadErr = fmt.Errorf("openapitest: %w", err)
		return
	}
	compiler = c
}

// normalize turns YAML's map[any]any into map[string]any, recursively.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
		return v
	}
	return v
}

// Keywords whose value is a schema, a list of schemas, or a map of schemas.
var (
	schemaKeys    = []string{"items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems"}
	schemaListKey = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeys = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// rewrite converts one schema (and its subschemas) from the document's
// OpenAPI dialect to JSON Schema 2020-12. comp is the enclosing component.
func rewrite(v any, comp string) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v // true/false schemas
	}
	for _, k := range schemaKeys {
		if sub, ok := s[k]; ok {
			s[k] = rewrite(sub, comp)
		}
	}
	for _, k := range schemaListKey {
		if list, ok := s[k].([]any); ok {
			for i, sub := range list {
				list[i] = rewrite(sub, comp)
			}
		}
	}
	for _, k := range schemaMapKeys {
		if m, ok := s[k].(map[string]any); ok {
			for name, sub := range m {
				m[name] = rewrite(sub, comp)
			}
		}
	}
	// In OpenAPI a discriminator, not the oneOf count, picks the branch; when
	// branches overlap (InputItem's EasyInputMessage and Item both accept a
	// user message with a content list) a strict oneOf rejects valid bodies.
	if one, ok := s["oneOf"]; ok {
		if _, disc := s["discriminator"]; disc {
			s["anyOf"] = one
			delete(s, "oneOf")
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok {
			s["$ref"] = "#/$defs/" + name
		}
	}
	if _, ok := s["$recursiveAnchor"].(bool); ok {
		delete(s, "$recursiveAnchor") // 2019-09; 2020-12 wants a string
	}
	if req, ok := s["required"].([]any); ok {
		s["required"] = dedupe(req) // the document repeats some names
	}
	if ref, ok := s["$recursiveRef"].(string); ok && ref == "#" {
		delete(s, "$recursiveRef")
		s["$ref"] = "#/$defs/" + comp
	}
	for _, kw := range [...][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if b, ok := s[kw[0]].(bool); ok {
			delete(s, kw[0])
			if bound, ok := s[kw[1]]; ok && b {
				s[kw[0]] = bound
				delete(s, kw[1])
			}
		}
	}
	if n, ok := s["nullable"].(bool); ok {
		delete(s, "nullable")
		if n {
			return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, s}}
		}
	}
	return s
}

func dedupe(list []any) []any {
	seen := make(map[any]bool, len(list))
	out := list[:0]
	for _, v := range list {
		if k, ok := v.(string); ok {
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, v)
	}
	return out
}

func clip(b []byte) string {
	const max = 2000
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
