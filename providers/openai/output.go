package openai

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/weakcache"
)

// Output modes of OpenAI-compatible servers that lack response_format
// json_schema (or that honour it for few of their models): the run offers an
// output tool instead.
var presetOutputModes = map[string]runlet.OutputMode{
	"deepseek":   runlet.OutputTool, // JSON mode (json_object) only
	"dashscope":  runlet.OutputTool, // Qwen: JSON mode only on most models
	"openrouter": runlet.OutputTool, // json_schema only for some routed models; tools for most
}

// OpenAI models older than Structured Outputs (gpt-4o-2024-08-06).
var legacyModelPrefixes = []string{"gpt-3.5", "gpt-4-", "o1-mini", "o1-preview"}

// OutputMode implements runlet.OutputModer: native (response_format
// json_schema) for OpenAI's current models and for servers that support it
// (Ollama, vLLM, llama.cpp, other names); the output tool for the DeepSeek,
// DashScope and OpenRouter presets, and for OpenAI models that predate
// Structured Outputs (gpt-3.5*, gpt-4, gpt-4-*, o1-mini, o1-preview).
//
// In native mode, both adapters send the schema strict when it can be made
// strict, and as given with strict false otherwise; the run's own
// validation checks answers either way. The strict transform, applied to
// the root, properties, items, anyOf branches and $defs:
//
//   - The root must be an object (the runtime wraps other values in
//     {"value": ...}).
//   - Every object gets additionalProperties false and lists all its
//     properties in required. A property that was optional becomes
//     nullable: "null" joins its type (and null its enum), or, for a $ref
//     or anyOf, an anyOf branch {"type": "null"}. The runtime drops such
//     nulls again before validating, so optional stays optional.
//   - Kept keywords: type, properties, required, additionalProperties,
//     items, anyOf, enum, const, $ref, $defs, definitions, description,
//     title, pattern, format (date-time, time, date, duration, email,
//     hostname, ipv4, ipv6, uuid), multipleOf, minimum, maximum,
//     exclusiveMinimum, exclusiveMaximum, minItems, maxItems. oneOf
//     becomes anyOf.
//   - Dropped keywords (the run's own validation still enforces them):
//     default, examples, deprecated, readOnly, writeOnly, minLength,
//     maxLength, other formats, uniqueItems, contains, min/maxContains,
//     min/maxProperties, propertyNames, not, if/then/else, dependent*.
//   - Not strict at all (sent as is, strict false): an object whose
//     additionalProperties allows members (a Go map), patternProperties,
//     allOf, prefixItems, unevaluated*, $dynamicRef, a schema without a
//     type ({} — a Go interface field), or a false schema.
func (m *ChatCompletions) OutputMode(*runlet.OutputSchema) runlet.OutputMode {
	if mode, ok := presetOutputModes[m.r.name]; ok {
		return mode
	}
	if m.r.name == "openai" && (m.r.model == "gpt-4" || slices.ContainsFunc(legacyModelPrefixes, func(p string) bool { return strings.HasPrefix(m.r.model, p) })) {
		return runlet.OutputTool
	}
	return runlet.OutputNative
}

// OutputMode implements runlet.OutputModer: native (text.format
// json_schema), which every model of the Responses API supports.
func (m *Responses) OutputMode(*runlet.OutputSchema) runlet.OutputMode { return runlet.OutputNative }

// outputFormat is the wire form of an output schema: its name (default
// "output"), its schema's JSON and whether it is sent strict. The schema is
// made strict when it can be (see strictSchema); otherwise it is sent as is
// with strict false, and the run's own validation still checks answers.
func outputFormat(s *runlet.OutputSchema) (name string, schema json.RawMessage, strict bool, err error) {
	name = s.Name
	if name == "" {
		name = "output"
	}
	if st := strictFor(s.Schema); st != nil {
		schema, err = schemajson.Marshal(st)
		return name, schema, true, err
	}
	schema, err = schemajson.Marshal(s.Schema)
	return name, schema, false, err
}

var strictCache weakcache.Cache[jsonschema.Schema, *jsonschema.Schema] // nil: cannot be strict

// strictFor returns the strict form of s, made once per schema (schemas
// are immutable once sent), or nil if s cannot be made strict.
func strictFor(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	st, _ := strictCache.Get(s, func(s *jsonschema.Schema) (*jsonschema.Schema, error) {
		if st, ok := strictSchema(s); ok {
			return st, nil
		}
		return nil, nil
	})
	return st
}

// strictSchema rewrites s for OpenAI's strict Structured Outputs by the
// rules in the ChatCompletions.OutputMode documentation, or reports that it
// cannot.
func strictSchema(s *jsonschema.Schema) (*jsonschema.Schema, bool) {
	if s.Type != "object" {
		return nil, false
	}
	return strictNode(s, 0)
}

var strictFormats = map[string]bool{
	"date-time": true, "time": true, "date": true, "duration": true, "email": true,
	"hostname": true, "ipv4": true, "ipv6": true, "uuid": true,
}

func strictNode(s *jsonschema.Schema, depth int) (*jsonschema.Schema, bool) {
	if s == nil || depth > 64 {
		return nil, false
	}
	if len(s.AllOf) > 0 || len(s.PrefixItems) > 0 || len(s.PatternProperties) > 0 || s.UnevaluatedItems != nil ||
		s.UnevaluatedProperties != nil || s.DynamicRef != "" || isFalse(s) {
		return nil, false
	}
	out := &jsonschema.Schema{
		Ref: s.Ref, Title: s.Title, Description: s.Description,
		Type: s.Type, Types: slices.Clone(s.Types), Enum: slices.Clone(s.Enum), Const: s.Const,
		Pattern: s.Pattern, MultipleOf: s.MultipleOf, Minimum: s.Minimum, Maximum: s.Maximum,
		ExclusiveMinimum: s.ExclusiveMinimum, ExclusiveMaximum: s.ExclusiveMaximum,
		MinItems: s.MinItems, MaxItems: s.MaxItems,
	}
	if strictFormats[s.Format] {
		out.Format = s.Format
	}
	var ok bool
	for _, defs := range []struct {
		in  map[string]*jsonschema.Schema
		out *map[string]*jsonschema.Schema
	}{{s.Defs, &out.Defs}, {s.Definitions, &out.Definitions}} {
		if defs.in == nil {
			continue
		}
		*defs.out = make(map[string]*jsonschema.Schema, len(defs.in))
		for k, d := range defs.in {
			if (*defs.out)[k], ok = strictNode(d, depth+1); !ok {
				return nil, false
			}
		}
	}
	branches := s.AnyOf
	if len(branches) == 0 {
		branches = s.OneOf
	}
	for _, b := range branches {
		sb, ok := strictNode(b, depth+1)
		if !ok {
			return nil, false
		}
		out.AnyOf = append(out.AnyOf, sb)
	}
	if s.Ref == "" && len(out.AnyOf) == 0 && out.Type == "" && len(out.Types) == 0 && out.Enum == nil && out.Const == nil {
		return nil, false // unconstrained: strict mode needs a type
	}
	if s.Items != nil {
		if out.Items, ok = strictNode(s.Items, depth+1); !ok {
			return nil, false
		}
	}
	if s.Type == "object" || slices.Contains(s.Types, "object") || s.Properties != nil {
		if ap := s.AdditionalProperties; ap != nil && !isFalse(ap) {
			return nil, false
		}
		out.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		out.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
		names := slices.Sorted(maps.Keys(s.Properties))
		if len(s.PropertyOrder) > 0 {
			out.PropertyOrder = slices.Clone(s.PropertyOrder)
		}
		for _, name := range names {
			p, ok := strictNode(s.Properties[name], depth+1)
			if !ok {
				return nil, false
			}
			if !slices.Contains(s.Required, name) {
				p = nullable(p)
			}
			out.Properties[name] = p
		}
		out.Required = names
	}
	return out, true
}

// isFalse reports whether s is the false schema {"not": {}}.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && s.Not.Type == "" && len(s.Not.Types) == 0 && s.Not.Not == nil && s.Not.Ref == "" &&
		len(s.Not.Properties) == 0 && len(s.Not.AnyOf) == 0 && s.Not.Enum == nil
}

// nullable lets s also accept null.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	switch {
	case s.Ref != "" || len(s.AnyOf) > 0:
		if slices.ContainsFunc(s.AnyOf, func(b *jsonschema.Schema) bool { return b.Type == "null" }) {
			return s
		}
		if s.Ref == "" {
			s.AnyOf = append(s.AnyOf, &jsonschema.Schema{Type: "null"})
			return s
		}
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
	case s.Type != "":
		if s.Type != "null" {
			s.Types, s.Type = []string{s.Type, "null"}, ""
		}
	case len(s.Types) > 0 && !slices.Contains(s.Types, "null"):
		s.Types = append(s.Types, "null")
	}
	if s.Enum != nil && !slices.Contains(s.Enum, any(nil)) {
		s.Enum = append(s.Enum, nil)
	}
	return s
}
