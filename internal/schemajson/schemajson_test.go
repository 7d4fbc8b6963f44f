package schemajson

import (
	"encoding/json"
	"testing"

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
