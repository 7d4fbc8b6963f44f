package otel

import (
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// A writer calls a researcher agent as a tool, which calls a tool of its
// own: the researcher's invoke_agent span is a child of the writer's
// execute_tool span, and its spans are under it.
func TestAgentAsToolSpanTree(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		h := newHarness(t)
		lookup := runlet.NewTool("lookup", "Looks up.", func(context.Context, struct{}) (string, error) { return "found", nil })
		researcher := &runlet.Agent{Name: "researcher", Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("l1", "lookup", `{}`)),
			runlettest.TextReply("facts"),
		), Tools: []runlet.Tool{lookup}}
		writer := &runlet.Agent{Name: "writer", Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("c1", "researcher", `{"input":"dig"}`)),
			runlettest.TextReply("essay"),
		), Tools: []runlet.Tool{researcher.AsTool()}}
		rt := h.runtime()
		if streaming {
			for _, err := range rt.Stream(context.Background(), writer, "write") {
				if err != nil {
					t.Fatal(err)
				}
			}
		} else if _, err := rt.Run(context.Background(), writer, "write"); err != nil {
			t.Fatal(err)
		}
		h.assertNoState(t)

		root := h.span(t, "invoke_agent writer")
		call := h.span(t, "execute_tool researcher")
		sub := h.span(t, "invoke_agent researcher")
		inner := h.span(t, "execute_tool lookup")
		if root.Parent.IsValid() {
			t.Fatal("the run's span has a parent")
		}
		for _, c := range []struct {
			child, parent string
			got, want     [2]string
		}{
			{"execute_tool researcher", "invoke_agent writer", [2]string{call.Parent.SpanID().String(), call.SpanContext.TraceID().String()}, [2]string{root.SpanContext.SpanID().String(), root.SpanContext.TraceID().String()}},
			{"invoke_agent researcher", "execute_tool researcher", [2]string{sub.Parent.SpanID().String(), sub.SpanContext.TraceID().String()}, [2]string{call.SpanContext.SpanID().String(), root.SpanContext.TraceID().String()}},
			{"execute_tool lookup", "invoke_agent researcher", [2]string{inner.Parent.SpanID().String(), inner.SpanContext.TraceID().String()}, [2]string{sub.SpanContext.SpanID().String(), root.SpanContext.TraceID().String()}},
		} {
			if c.got != c.want {
				t.Errorf("streaming=%v: %s: parent/trace %v, want %s %v", streaming, c.child, c.got, c.parent, c.want)
			}
		}
		var chats int
		for _, s := range h.spans.GetSpans() {
			if s.Name == "chat" && s.Parent.SpanID() == sub.SpanContext.SpanID() {
				chats++
			}
		}
		if chats != 2 {
			t.Errorf("the researcher's span has %d chat children, want 2", chats)
		}
		wantAttrs(t, sub, map[string]string{"gen_ai.agent.name": "researcher", "runlet.run.status": "finished", "runlet.run.turns": "2"})
		if sub.EndTime.After(call.EndTime) || sub.StartTime.Before(call.StartTime) {
			t.Error("the researcher's span is not within its tool call's")
		}
	}
}

func TestHandoffSpanEvent(t *testing.T) {
	h := newHarness(t)
	billing := &runlet.Agent{Name: "billing", Model: runlettest.NewModel(runlettest.TextReply("refunded"))}
	triage := &runlet.Agent{Name: "triage", Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("h1", "transfer_to_billing", `{}`)),
	), Handoffs: []runlet.Handoff{{Agent: billing}}}
	if _, err := h.runtime().Run(context.Background(), triage, "refund"); err != nil {
		t.Fatal(err)
	}
	h.assertNoState(t)
	run := h.span(t, "invoke_agent triage")
	var found bool
	for _, ev := range run.Events {
		if ev.Name == "runlet.handoff" {
			a := attrs(ev.Attributes)
			found = a["runlet.handoff.from"] == "triage" && a["runlet.handoff.to"] == "billing"
		}
	}
	if !found {
		t.Fatalf("no handoff event on the run span: %+v", run.Events)
	}
}
