package main

import (
	"strings"
	"testing"
)

// Without credentials each cloud runs against its fake: a tool call, then
// the answer.
func TestOffline(t *testing.T) {
	for _, c := range []struct{ cloud, model, fake string }{
		{"vertex", "", "fake Vertex AI"},
		{"vertex", "claude-sonnet-4-5@20250929", "fake Vertex AI"},
		{"azure", "", "fake Azure OpenAI"},
	} {
		var out, errs strings.Builder
		env := func(k string) string {
			if k == "RUNLET_MODEL" {
				return c.model
			}
			return ""
		}
		if err := run(t.Context(), c.cloud, "", env, &out, &errs); err != nil {
			t.Fatalf("%s %s: %v", c.cloud, c.model, err)
		}
		if out.String() != "It's 21°C and sunny in Lisbon.\n" {
			t.Errorf("%s %s: stdout = %q", c.cloud, c.model, out.String())
		}
		if !strings.Contains(errs.String(), c.fake) || !strings.Contains(errs.String(), `get_weather({"city":"Lisbon"}) = Lisbon: 21°C, sunny`) {
			t.Errorf("%s %s: stderr = %q", c.cloud, c.model, errs.String())
		}
	}
}
