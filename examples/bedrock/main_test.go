package main

import (
	"strings"
	"testing"
)

// Without credentials the example runs against the fake Bedrock, which
// verifies each request's SigV4 signature: a tool call, then the answer.
func TestBedrockOffline(t *testing.T) {
	var out, errs strings.Builder
	noEnv := func(string) string { return "" }
	if err := run(t.Context(), "", noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "It's 21°C and sunny in Lisbon.\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if !strings.Contains(errs.String(), "fake Bedrock") || !strings.Contains(errs.String(), `get_weather({"city":"Lisbon"}) = Lisbon: 21°C, sunny`) {
		t.Errorf("stderr = %q", errs.String())
	}
}
