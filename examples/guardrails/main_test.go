package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGuardrailsExample(t *testing.T) {
	for _, hold := range []bool{false, true} {
		var out strings.Builder
		if err := run(context.Background(), hold, &out); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"Your order 1042 shipped yesterday and arrives tomorrow.\n  (model calls: agent 2, moderation 1)",
			"stopped by guardrail max_input_bytes on the input: the input is 5000 bytes, over the limit of 4096",
			"stopped by guardrail moderation on the input: flagged as jailbreak",
			"  guardrail refund_limit rejected a tool call: refunds over 100 EUR need a person; tell the customer a colleague will follow up\nA colleague will follow up on your refund of 250 EUR.\n  (model calls: agent 2, moderation 1)",
			"stopped by guardrail pii on the output: the answer contains email",
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("hold=%v: output lacks %q:\n%s", hold, w, out.String())
			}
		}
		shown := strings.Contains(out.String(), "ada@example.org")
		withdrawn := strings.Contains(out.String(), "[the text above is withdrawn: guardrail pii]")
		if shown == hold || withdrawn == hold {
			t.Errorf("hold=%v: answer shown %v, withdrawn %v:\n%s", hold, shown, withdrawn, out.String())
		}
	}
}
