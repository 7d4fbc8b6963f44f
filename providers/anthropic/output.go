package anthropic

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/weakcache"
)

// OutputMode implements runlet.OutputModer. Native structured output
// (output_config.format) is used on models that support it — Claude 4.5
// and later, and Claude Opus 4.1 — when the schema fits its limits (see
// nativeSchema); otherwise the run offers an output tool and makes the
// model call it. A model name that is not a Claude name (a proxy's alias)
// is taken to support it.
//
// Anthropic does not allow a forced tool choice with extended thinking: with
// thinking on and a model without native support, use WithOutputMode
// (runlet.OutputPrompted).
func (m *Messages) OutputMode(s *runlet.OutputSchema) runlet.OutputMode {
	if !nativeModel(m.cfg.model) {
		return runlet.OutputTool
	}
	if s != nil && s.Schema != nil && nativeFor(s.Schema) == nil {
		return runlet.OutputTool
	}
	return runlet.OutputNative
}

// nativeModel reports whether a model supports output_config.format:
// claude-<family>-<major>[-<minor>][-<date>] at 4.5 or later, or Opus 4.1.
// Older names (claude-3-5-sonnet-..., claude-sonnet-4-0) do not.
func nativeModel(model string) bool {
	family, major, minor, claude, ok := claudeVersion(model)
	switch {
	case !claude:
		return true
	case !ok:
		return false
	case major >= 5, major == 4 && minor >= 5:
		return true
	case family == "opus" && major == 4 && minor == 1:
		return true
	}
	return false
}

// claudeVersion reads a claude-<family>-<major>[-<minor>][-<date>] name.
// claude is false for a name that is not a Claude name (a proxy's alias);
// ok is false for a Claude name of another shape (claude-3-5-sonnet-...,
// the version first).
func claudeVersion(model string) (family string, major, minor int, claude, ok bool) {
	rest, claude := strings.CutPrefix(model, "claude-")
	if !claude {
		return "", 0, 0, false, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) < 2 {
		return "", 0, 0, true, false
	}
	family = parts[0]
	if _, err := strconv.Atoi(family); err == nil {
		return "", 0, 0, true, false // claude-3-5-sonnet style: the version comes first
	}
	major, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", 0, 0, true, false
	}
	if len(parts) > 2 && len(parts[2]) <= 2 {
		minor, _ = strconv.Atoi(parts[2])
	}
	return family, major, minor, true, true
}

var nativeCache weakcache.Cache[jsonschema.Schema, json.RawMessage] // nil: does not fit

// outputSchemaJSON is the schema sent in output_config.format: nativeFor's
// form when there is one, else s as given.
func outputSchemaJSON(s *jsonschema.Schema) (json.RawMessage, error) {
	if raw := nativeFor(s); raw != nil {
		return raw, nil
	}
	return schemajson.Marshal(s)
}

// nativeFor returns the JSON of nativeSchema(s), made once per schema, or
// nil if s does not fit.
func nativeFor(s *jsonschema.Schema) json.RawMessage {
	raw, _ := nativeCache.Get(s, func(s *jsonschema.Schema) (json.RawMessage, error) {
		ns, ok := nativeSchema(s, 0)
		if !ok {
			return nil, nil
		}
		raw, err := json.Marshal(ns)
		if err != nil {
			return nil, nil // does not fit: outputSchemaJSON sends s as given
		}
		return raw, nil
	})
	return raw
}

// nativeSchema fits s to Anthropic's structured outputs: every object gets
// additionalProperties false, and the constraints the API does not accept
// are dropped (minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// multipleOf, minLength, maxLength, maxItems, minItems above 1,
// minProperties, maxProperties); the run's own validation still enforces
// them. A schema with an object open to other members (a Go map),
// patternProperties or a $ref (possibly recursive) does not fit.
func nativeSchema(s *jsonschema.Schema, depth int) (*jsonschema.Schema, bool) {
	if s == nil {
		return nil, true
	}
	if depth > 64 || s.Ref != "" || s.DynamicRef != "" || len(s.PatternProperties) > 0 {
		return nil, false
	}
	out := *s
	out.Minimum, out.Maximum, out.ExclusiveMinimum, out.ExclusiveMaximum, out.MultipleOf = nil, nil, nil, nil, nil
	out.MinLength, out.MaxLength, out.MaxItems, out.MinProperties, out.MaxProperties = nil, nil, nil, nil, nil
	if out.MinItems != nil && *out.MinItems > 1 {
		out.MinItems = nil
	}
	var ok bool
	if out.Items, ok = nativeSchema(s.Items, depth+1); !ok {
		return nil, false
	}
	for _, list := range []*[]*jsonschema.Schema{&out.AnyOf, &out.OneOf, &out.AllOf} {
		if *list == nil {
			continue
		}
		fitted := make([]*jsonschema.Schema, len(*list))
		for i, b := range *list {
			if fitted[i], ok = nativeSchema(b, depth+1); !ok {
				return nil, false
			}
		}
		*list = fitted
	}
	if s.Type == "object" || s.Properties != nil {
		if ap := s.AdditionalProperties; ap != nil && ap.Not == nil {
			return nil, false
		}
		out.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		if s.Properties != nil {
			out.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
			for k, p := range s.Properties {
				if out.Properties[k], ok = nativeSchema(p, depth+1); !ok {
					return nil, false
				}
			}
		}
	}
	return &out, true
}
