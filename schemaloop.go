package runlet

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// refLoop reports a $ref cycle that validation would follow without
// stepping into the value: "#/$defs/r" being anyOf [string, r], or a $ref
// to itself. jsonschema-go's validator recurses on such a schema until the
// goroutine's stack overflows, a fatal error no recover catches, so a tool
// or output schema with one is refused when it is made. Cycles through
// properties, items and the like are fine: each step goes one level into
// the value, which is finite.
func refLoop(root *jsonschema.Schema) error {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[*jsonschema.Schema]int{}
	var visit func(s *jsonschema.Schema, path []string) error
	visit = func(s *jsonschema.Schema, path []string) error {
		if s == nil || state[s] == done {
			return nil
		}
		if state[s] == onPath {
			return fmt.Errorf("the schema refers to itself without going into the value: %s", strings.Join(path, " → "))
		}
		state[s] = onPath
		next := []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else}
		next = append(next, s.AllOf...)
		next = append(next, s.AnyOf...)
		next = append(next, s.OneOf...)
		for _, d := range s.DependentSchemas {
			next = append(next, d)
		}
		if s.Ref != "" {
			if s.Ref == "#" {
				next = append(next, root)
			} else if t := lookupRef(root, s.Ref); t != nil {
				next = append(next, t)
			}
		}
		for _, n := range next {
			p := path
			if n != nil && n.Ref != "" {
				p = append(path[:len(path):len(path)], n.Ref)
			}
			if err := visit(n, p); err != nil {
				return err
			}
		}
		state[s] = done
		return nil
	}
	// Every subschema may be where validation starts following references:
	// walk them all, each a fresh start.
	var err error
	walkSchema(root, func(s *jsonschema.Schema) {
		if err == nil && state[s] == unseen {
			err = visit(s, []string{"#"})
		}
	})
	return err
}

// walkSchema calls f on s and every subschema in it, each once.
func walkSchema(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	seen := map[*jsonschema.Schema]bool{}
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		f(s)
		for _, c := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else, s.Items, s.AdditionalProperties, s.AdditionalItems, s.Contains, s.PropertyNames, s.UnevaluatedItems, s.UnevaluatedProperties} {
			walk(c)
		}
		for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems, s.ItemsArray} {
			for _, c := range l {
				walk(c)
			}
		}
		for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.DependentSchemas, s.Defs, s.Definitions} {
			for _, c := range m {
				walk(c)
			}
		}
	}
	walk(s)
}
