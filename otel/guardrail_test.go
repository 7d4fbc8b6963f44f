package otel

import (
	"context"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.opentelemetry.io/otel/codes"
)

// Each guardrail check is a span under the agent's span (under the tool's
// span for a tool call's check), with the check's model calls under it,
// even while the agent's own model call runs beside it.
func TestGuardrailSpans(t *testing.T) {
	for _, stream := range []bool{false, true} {
		h := newHarness(t)
		judge := runlettest.NewModel(runlettest.TextReply("safe"))
		moderation := runlet.Guardrail{Name: "moderation", Input: func(ctx context.Context, in runlet.GuardrailInput) (runlet.GuardrailVerdict, error) {
			_, err := runlet.CallModel(ctx, "moderation", judge, &runlet.ModelRequest{Messages: in.Input, Options: map[string]any{"model": "judge-1"}})
			return runlet.GuardrailVerdict{}, err
		}}
		args := runlet.Guardrail{Name: "args", ToolCall: func(context.Context, runlet.ToolCallPart) (runlet.GuardrailVerdict, error) {
			return runlet.GuardrailVerdict{}, nil
		}}
		leak := runlet.Guardrail{Name: "leak", Output: func(_ context.Context, out runlet.GuardrailOutput) (runlet.GuardrailVerdict, error) {
			if strings.Contains(out.Text, "Paris") {
				return runlet.Tripwire("names a city", nil), nil
			}
			return runlet.GuardrailVerdict{}, nil
		}}
		agent := weatherAgent()
		agent.Guardrails = []runlet.Guardrail{moderation, args, leak}
		if err := run(context.Background(), h.runtime(), agent, "weather?", stream); err == nil {
			t.Fatal("the output guardrail did not trip")
		}
		h.assertNoState(t)
		root := h.span(t, "invoke_agent assistant")
		mod := h.span(t, "guardrail moderation")
		judgeChat := h.span(t, "chat judge-1")
		tool := h.span(t, "execute_tool get_weather")
		argCheck := h.span(t, "guardrail args")
		leakCheck := h.span(t, "guardrail leak")
		if mod.Parent.SpanID() != root.SpanContext.SpanID() || judgeChat.Parent.SpanID() != mod.SpanContext.SpanID() {
			t.Errorf("stream=%v: the check's span is not under the agent's, or its model call not under it", stream)
		}
		if argCheck.Parent.SpanID() != tool.SpanContext.SpanID() || leakCheck.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("stream=%v: tool check under %v, output check under %v", stream, argCheck.Parent.SpanID(), leakCheck.Parent.SpanID())
		}
		wantAttrs(t, mod, map[string]string{"runlet.guardrail.stage": "input", "runlet.guardrail.action": "pass"})
		wantAttrs(t, argCheck, map[string]string{"runlet.guardrail.stage": "tool_call", "gen_ai.tool.call.id": "c1"})
		wantAttrs(t, leakCheck, map[string]string{"runlet.guardrail.action": "trip", "error.type": "guardrail_tripped"})
		if leakCheck.Status.Code != codes.Error || mod.Status.Code == codes.Error {
			t.Errorf("statuses: leak %v, moderation %v", leakCheck.Status, mod.Status)
		}
		wantAttrs(t, root, map[string]string{"runlet.run.policy": "guardrail:leak"})
		for _, s := range []string{"chat m-1"} {
			for _, span := range h.spans.GetSpans() {
				if span.Name == s && span.Parent.SpanID() != root.SpanContext.SpanID() {
					t.Errorf("%s is not under the agent's span", s)
				}
			}
		}
	}
}
