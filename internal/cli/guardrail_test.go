package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// A guardrail's tripwire, rejection or failure is one clear line on
// stderr; a passing check prints nothing, and a check's model call beside
// the agent's does not break the streamed answer.
func TestRendererGuardrailLines(t *testing.T) {
	var out, errb bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errb, func(string) string { return "" })
	r := a.newRenderer(true)
	for _, ev := range []runlet.Event{
		&runlet.ModelStarted{Purpose: runlet.PurposeAgent},
		&runlet.TextDelta{Delta: "The secret"},
		&runlet.ModelStarted{Purpose: "moderation", Check: "mod/input"},
		&runlet.ModelFinished{Purpose: "moderation", Check: "mod/input", Response: &runlet.ModelResponse{}},
		&runlet.GuardrailChecked{Guardrail: "mod", Stage: runlet.GuardInput, Action: runlet.GuardrailPass},
		&runlet.TextDelta{Delta: " is 42."},
		&runlet.ModelFinished{Purpose: runlet.PurposeAgent, Response: &runlet.ModelResponse{}},
		&runlet.GuardrailChecked{Guardrail: "pii", Stage: runlet.GuardToolCall, CallID: "c1", Action: runlet.GuardrailReject, Message: "the call's arguments contain email"},
		&runlet.GuardrailChecked{Guardrail: "judge", Stage: runlet.GuardOutput, Action: runlet.GuardrailPass, Error: "classifier down"},
		&runlet.GuardrailChecked{Guardrail: "leak", Stage: runlet.GuardOutput, Action: runlet.GuardrailTrip, Message: "leaks a secret"},
		&runlet.OutputWithdrawn{Guardrail: "leak", Stage: runlet.GuardOutput},
	} {
		r.event(ev)
	}
	r.close()
	if out.String() != "The secret is 42.\n" {
		t.Errorf("stdout = %q", out.String())
	}
	want := "" +
		"  ✗ guardrail pii rejected the tool call: the call's arguments contain email\n" +
		"· guardrail judge failed, let through: classifier down\n" +
		"⊘ guardrail leak stopped the run (output): leaks a secret\n" +
		"⊘ the answer above is withdrawn: guardrail leak stopped it\n"
	if errb.String() != want {
		t.Errorf("stderr = %q, want %q", errb.String(), want)
	}
}
