package wirejson

import (
	"encoding/json"
	"testing"
)

func TestMarshalKeepsHTML(t *testing.T) {
	b, err := Marshal(map[string]string{"t": "<b>&</b>"})
	if err != nil || string(b) != `{"t":"<b>&</b>"}` {
		t.Fatalf("%s %v", b, err)
	}
}

func TestOverlay(t *testing.T) {
	body := []byte(`{"model":"a","temperature":0.5,"stream":true}`)
	got, err := Overlay(body, map[string]any{"model": "b", "temperature": nil, "seed": 7, "metadata": map[string]any{"k": "<v>"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"metadata":{"k":"<v>"},"model":"b","seed":7,"stream":true}` {
		t.Fatalf("%s", got)
	}
	if _, err := Overlay([]byte(`[1]`), nil); err == nil {
		t.Fatal("non-object body accepted")
	}
	if _, err := Overlay(body, map[string]any{"bad": func() {}}); err == nil {
		t.Fatal("unencodable option accepted")
	}
}

func TestToInt(t *testing.T) {
	for _, v := range []any{int8(3), int16(3), int32(3), int64(3), uint(3), uint8(3), uint16(3), uint32(3), uint64(3), float32(3), 3.0, json.Number("3")} {
		if n, ok := ToInt(v); !ok || n != 3 {
			t.Errorf("ToInt(%T) = %d, %v", v, n, ok)
		}
	}
	for _, v := range []any{uint64(1 << 63), 1e300, 2.5, json.Number("x"), "3", nil} {
		if _, ok := ToInt(v); ok {
			t.Errorf("ToInt(%v) ok", v)
		}
	}
}

func TestObjectAndCompact(t *testing.T) {
	for in, want := range map[string]string{` {"a":1} `: `{"a":1}`, `[1]`: `{}`, `{"a":`: `{}`, ``: `{}`} {
		if got := Object(json.RawMessage(in)); string(got) != want {
			t.Errorf("Object(%q) = %s", in, got)
		}
	}
	for in, want := range map[string]string{"{ \"a\" : 1 }": `{"a":1}`, `null`: `{}`, ``: `{}`, `{"a":`: `{"a":`} {
		if got := Compact(json.RawMessage(in)); string(got) != want {
			t.Errorf("Compact(%q) = %s", in, got)
		}
	}
}
