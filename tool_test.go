package runlet_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
)

// Tools a provider would reject are refused when they are made, not when
// the live API answers 400.
func TestNewToolRefusesWhatProvidersReject(t *testing.T) {
	type in struct {
		Q string `json:"q"`
	}
	fn := func(context.Context, in) (string, error) { return "", nil }
	for _, name := range []string{"", "get weather", "get.weather", "wetter_größe", strings.Repeat("a", 65), "a/b"} {
		if _, err := runlet.NewToolE(name, "", fn); err == nil || !strings.Contains(err.Error(), "64") {
			t.Errorf("name %q: err = %v", name, err)
		}
	}
	for _, name := range []string{"a", "get_weather", "get-weather-2", strings.Repeat("Z", 64)} {
		if _, err := runlet.NewToolE(name, "", fn); err != nil {
			t.Errorf("name %q: %v", name, err)
		}
	}
	str := func(context.Context, string) (string, error) { return "", nil }
	if _, err := runlet.NewToolE("echo", "", str); err == nil || !strings.Contains(err.Error(), "object") {
		t.Errorf("string input: err = %v", err)
	}
	list := func(context.Context, []int) (string, error) { return "", nil }
	if _, err := runlet.NewToolE("sum", "", list); err == nil {
		t.Error("array input accepted")
	}
	if _, err := runlet.NewToolE("q", "", fn, runlet.WithInputSchema(&jsonschema.Schema{Type: "string"})); err == nil {
		t.Error("a string WithInputSchema accepted")
	}
	if _, err := runlet.NewToolE("q", "", fn, runlet.WithInputSchema(nil)); err == nil {
		t.Error("a nil WithInputSchema accepted")
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(error).Error(), "get weather") {
			t.Errorf("NewTool with a bad name: panic %v", v)
		}
	}()
	runlet.NewTool("get weather", "", fn)
}
