// Package weakcache keeps a value made from a pointer's target once per
// target, keyed by the target's address through a weak pointer: the cache
// never keeps a target alive, and an entry goes away with its target.
//
// It is the one such cache of this module. The root caches each output
// schema's resolved and wrapped forms, internal/schemajson each schema's
// JSON, and the OpenAI and Anthropic adapters each schema's strict or native
// form, all with it. Targets must not change once used: a changed target
// keeps the value made from its old contents (ToolSpec and OutputSchema
// document this for schemas).
package weakcache

import (
	"runtime"
	"sync"
	"weak"
)

// A Cache maps *K to V. The zero Cache is empty and ready; a Cache must not
// be copied after first use.
type Cache[K, V any] struct {
	m sync.Map // weak.Pointer[K] → V
}

// Get returns the value made for k, calling build(k) when there is none. A
// value is kept only when build returns no error; an error is returned as
// is, and the next Get tries again. Concurrent first calls for one k may
// each call build; all but the first stored value are dropped.
func (c *Cache[K, V]) Get(k *K, build func(*K) (V, error)) (V, error) {
	key := weak.Make(k)
	if v, ok := c.m.Load(key); ok {
		return v.(V), nil
	}
	v, err := build(k)
	if err != nil {
		return v, err
	}
	actual, loaded := c.m.LoadOrStore(key, v)
	if loaded {
		return actual.(V), nil
	}
	runtime.AddCleanup(k, func(key weak.Pointer[K]) { c.m.Delete(key) }, key)
	return v, nil
}
