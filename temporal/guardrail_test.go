package temporal

import (
	"context"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// screen trips on an input or answer that says "forbidden", rejects
// get_weather calls for Lima and trips on a result that says "secret".
func screen() runlet.Guardrail {
	return runlet.Guardrail{
		Name: "screen",
		Input: func(_ context.Context, in runlet.GuardrailInput) (runlet.GuardrailVerdict, error) {
			if strings.Contains(in.Text(), "forbidden") {
				return runlet.Tripwire("forbidden input", map[string]string{"kind": "word"}), nil
			}
			return runlet.GuardrailVerdict{}, nil
		},
		Output: func(_ context.Context, out runlet.GuardrailOutput) (runlet.GuardrailVerdict, error) {
			if strings.Contains(out.Text, "forbidden") {
				return runlet.Tripwire("forbidden answer", nil), nil
			}
			return runlet.GuardrailVerdict{}, nil
		},
		ToolCall: func(_ context.Context, call runlet.ToolCallPart) (runlet.GuardrailVerdict, error) {
			if strings.Contains(string(call.Arguments), "Lima") {
				return runlet.RejectCall("not Lima"), nil
			}
			return runlet.GuardrailVerdict{}, nil
		},
		ToolResult: func(_ context.Context, _ runlet.ToolCallPart, res runlet.ToolResultPart) (runlet.GuardrailVerdict, error) {
			if strings.Contains(res.Content, "secret") {
				return runlet.Tripwire("a secret in a result", nil), nil
			}
			return runlet.GuardrailVerdict{}, nil
		},
	}
}

func TestGuardrailsInDurableRuns(t *testing.T) {
	secret := runlet.NewTool("lookup", "Looks up.", func(context.Context, struct{}) (string, error) { return "the secret is 42", nil })
	for _, tc := range []struct {
		name, input string
		replies     []runlettest.Reply
		onAgent     bool
		wantPolicy  string
		wantOutput  string
		calls       int // model calls
	}{
		{name: "input trips before any model call", input: "a forbidden question", replies: []runlettest.Reply{runlettest.TextReply("x")},
			wantPolicy: "guardrail:screen", calls: 0},
		{name: "a rejected call is not run", input: "weather?", onAgent: true, replies: []runlettest.Reply{
			runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Lima"}`), runlettest.Call("c2", "get_weather", `{"city":"Paris"}`)),
			runlettest.TextReply("done")}, wantOutput: "done", calls: 2},
		{name: "a result trips", input: "look it up", replies: []runlettest.Reply{
			runlettest.ToolCallReply(runlettest.Call("c1", "lookup", `{}`)), runlettest.TextReply("x")}, wantPolicy: "guardrail:screen", calls: 1},
		{name: "the answer trips", input: "say it", onAgent: true, replies: []runlettest.Reply{runlettest.TextReply("a forbidden answer")},
			wantPolicy: "guardrail:screen", calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c counter
			model := runlettest.NewModel(tc.replies...)
			agent := &runlet.Agent{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(&c), secret}}
			rec := &recorder{}
			cfg := Config{Agents: []*runlet.Agent{agent}, Observers: []runlet.Observer{rec}}
			if tc.onAgent {
				agent.Guardrails = []runlet.Guardrail{screen()}
			} else {
				cfg.Guardrails = []runlet.Guardrail{screen()}
			}
			e := env(t, mustNew(t, cfg))
			e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: tc.input})
			if n := len(model.Requests()); n != tc.calls {
				t.Fatalf("%d model calls, want %d", n, tc.calls)
			}
			if tc.wantPolicy != "" {
				app, fd := failure(t, e.GetWorkflowError())
				if app.Type() != ErrTypePolicy || fd.Policy != tc.wantPolicy {
					t.Fatalf("error %v, policy %q", app, fd.Policy)
				}
			} else {
				var res runlet.Result
				if err := e.GetWorkflowResult(&res); err != nil || res.Output != tc.wantOutput {
					t.Fatalf("result %q, %v", res.Output, err)
				}
				got := toolResults(res.Messages[2])
				if got[0].Content != "Error: a guardrail rejected the call: not Lima" || !got[0].IsError || got[1].Content != "sunny in Paris" || c.get("Lima") != 0 {
					t.Fatalf("results %+v, Lima ran %d times", got, c.get("Lima"))
				}
			}
			var checked int
			for _, ev := range rec.all() {
				if gc, ok := ev.(*runlet.GuardrailChecked); ok && gc.Guardrail == "screen" {
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("no guardrail.checked event")
			}
		})
	}
}
