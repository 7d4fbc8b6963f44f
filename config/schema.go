package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet/internal/suggest"
)

// schemaTypes are the JSON Schema type names.
var schemaTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// checkTypes reports the first unknown type name in s or a schema inside
// it, by its path ("properties.age.type"): jsonschema.Schema.Resolve does
// not check them, and a provider would refuse the request, or a validator
// reject every answer, only after a model call.
func checkTypes(s *jsonschema.Schema, path string) error {
	if s == nil {
		return nil
	}
	types := s.Types
	if s.Type != "" {
		types = append(types, s.Type)
	}
	for _, t := range types {
		if !slices.Contains(schemaTypes, t) {
			return fmt.Errorf("%stype: unknown type %q%s (want one of %s)", path, t, suggest.Hint(t, schemaTypes), list(schemaTypes))
		}
	}
	one := []struct {
		name string
		s    *jsonschema.Schema
	}{
		{"items", s.Items}, {"additionalItems", s.AdditionalItems}, {"contains", s.Contains},
		{"unevaluatedItems", s.UnevaluatedItems}, {"additionalProperties", s.AdditionalProperties},
		{"propertyNames", s.PropertyNames}, {"unevaluatedProperties", s.UnevaluatedProperties},
		{"not", s.Not}, {"if", s.If}, {"then", s.Then}, {"else", s.Else}, {"contentSchema", s.ContentSchema},
	}
	for _, c := range one {
		if err := checkTypes(c.s, path+c.name+"."); err != nil {
			return err
		}
	}
	lists := []struct {
		name string
		ss   []*jsonschema.Schema
	}{{"prefixItems", s.PrefixItems}, {"items", s.ItemsArray}, {"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}}
	for _, l := range lists {
		for i, c := range l.ss {
			if err := checkTypes(c, path+l.name+"."+strconv.Itoa(i)+"."); err != nil {
				return err
			}
		}
	}
	named := []struct {
		name string
		m    map[string]*jsonschema.Schema
	}{
		{"$defs", s.Defs}, {"definitions", s.Definitions}, {"properties", s.Properties},
		{"patternProperties", s.PatternProperties}, {"dependentSchemas", s.DependentSchemas},
	}
	for _, n := range named {
		for _, k := range slices.Sorted(maps.Keys(n.m)) {
			if err := checkTypes(n.m[k], path+n.name+"."+k+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckOutputSchema reports what is wrong with an output schema, given as
// the output_schema section decodes (a JSON Schema as a map): not a JSON
// Schema, a type name that does not exist, a bad pattern or reference.
// Build reports the same for a File's OutputSchema; a command that takes a
// schema from elsewhere checks it before any model call.
func CheckOutputSchema(m map[string]any) error {
	_, err := outputSchema(m)
	return err
}
