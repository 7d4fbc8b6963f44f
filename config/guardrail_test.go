package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/runlettest"
)

// The guardrails section turns on the ready guardrails: an input over the
// bound never reaches the model, personal data in the input stops the run.
func TestGuardrailsSection(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	// The PII screen runs beside the model call, which must not fail first.
	srv.EnqueueReplies(runlettest.WireReply{Text: "hello"})
	l := &config.Loader{}
	f, err := l.Decode("agent.yaml", []byte("model: {provider: openai, name: m, api_key: k, base_url: "+srv.BaseURL()+"}\n"+
		"guardrails:\n  max_input_bytes: 20\n  pii: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	rt := setup.NewRuntime()
	for input, name := range map[string]string{
		strings.Repeat("x", 21): "max_input_bytes",
		"mail ada@example.org":  "pii",
	} {
		_, err := rt.Run(t.Context(), setup.Agent, input)
		var gt *runlet.GuardrailTripped
		if !errors.As(err, &gt) || gt.Guardrail != name {
			t.Errorf("%q: err = %v, want guardrail %s", input, err, name)
		}
	}
	if n := len(srv.Requests()); n > 1 { // the PII screen runs beside the first call
		t.Errorf("%d requests reached the model", n)
	}

	if _, err := l.Decode("agent.yaml", []byte("model: {provider: openai, name: m}\nguardrails:\n  max_input_bytes: -1\n")); err == nil || !strings.Contains(err.Error(), "guardrails.max_input_bytes") {
		t.Errorf("a negative bound: %v", err)
	}
	if _, err := l.Decode("agent.yaml", []byte("model: {provider: openai, name: m}\nguardrails:\n  pi: true\n")); err == nil || !strings.Contains(err.Error(), `did you mean "pii"`) {
		t.Errorf("a misspelt key: %v", err)
	}
}
