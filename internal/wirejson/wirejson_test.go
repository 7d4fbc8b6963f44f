package wirejson

import "testing"

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
