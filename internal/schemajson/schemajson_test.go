package schemajson

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestMarshalCachesByPointer(t *testing.T) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string"}}}
	want, _ := json.Marshal(s)
	got, err := Marshal(s)
	if err != nil || string(got) != string(want) {
		t.Fatalf("got %s, %v", got, err)
	}
	again, _ := Marshal(s)
	if &again[0] != &got[0] {
		t.Fatal("second call did not hit the cache")
	}
	other := &jsonschema.Schema{Type: "string"}
	if b, _ := Marshal(other); string(b) != `{"type":"string"}` {
		t.Fatalf("other schema: %s", b)
	}
	if b, _ := Marshal(nil); string(b) != "null" {
		t.Fatalf("nil: %s", b)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Marshal(s) }); n > 1 {
		t.Fatalf("cached marshal allocates %.0f times", n)
	}
}

func TestEntriesGoAwayWithSchemas(t *testing.T) {
	count := func() int {
		n := 0
		cache.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	for range 100 {
		_, _ = Marshal(&jsonschema.Schema{Type: "integer"})
	}
	deadline := time.Now().Add(30 * time.Second) // a hang guard: GC clears them much sooner
	for count() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n > before {
		t.Fatalf("%d entries left after their schemas died", n-before)
	}
}
