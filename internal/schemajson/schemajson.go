// Package schemajson marshals JSON Schemas once. Adapters send every tool's
// input schema on every request; marshalling a *jsonschema.Schema costs
// hundreds of allocations, more than the rest of a request body. The cache
// (internal/weakcache) is keyed by the schema's address through a weak
// pointer, so it never keeps a schema alive, and entries go away with their
// schemas.
//
// Schemas must not be modified after they were first marshalled (ToolSpec
// documents this); a modified schema would keep its old JSON.
package schemajson

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet/internal/weakcache"
)

var cache weakcache.Cache[jsonschema.Schema, json.RawMessage]

// Marshal returns the JSON of s ("null" for a nil schema), from the cache
// when s was marshalled before. The returned bytes are shared: do not modify.
func Marshal(s *jsonschema.Schema) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage("null"), nil
	}
	return cache.Get(s, marshal)
}

func marshal(s *jsonschema.Schema) (json.RawMessage, error) { return json.Marshal(s) }
