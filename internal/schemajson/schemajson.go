// Package schemajson marshals JSON Schemas once. Adapters send every tool's
// input schema on every request; marshalling a *jsonschema.Schema costs
// hundreds of allocations, more than the rest of a request body. The cache
// is keyed by the schema's address through a weak pointer, so it never keeps
// a schema alive, and entries go away with their schemas.
//
// Schemas must not be modified after they were first marshalled (ToolSpec
// documents this); a modified schema would keep its old JSON.
package schemajson

import (
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"github.com/google/jsonschema-go/jsonschema"
)

var cache sync.Map // weak.Pointer[jsonschema.Schema] -> json.RawMessage

// Marshal returns the JSON of s ("null" for a nil schema), from the cache
// when s was marshalled before. The returned bytes are shared: do not modify.
func Marshal(s *jsonschema.Schema) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage("null"), nil
	}
	key := weak.Make(s)
	if v, ok := cache.Load(key); ok {
		return v.(json.RawMessage), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if _, loaded := cache.LoadOrStore(key, json.RawMessage(b)); !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[jsonschema.Schema]) { cache.Delete(k) }, key)
	}
	return b, nil
}
