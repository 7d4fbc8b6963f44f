package otel

import (
	"context"
	"strings"

	"github.com/runlet/runlet"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Guardrail spans: one "guardrail {name}" span per check (see
// runlet.Guardrail), under the agent's span, or under the tool's span for
// a check of a tool call; the check's own model calls are chat spans under
// it. A check without model calls is known only when it ends
// (runlet.GuardrailChecked), and its span is recorded then, from its start
// (the event's time less its duration). A check that calls a model opens
// its span at the first call.

var (
	keyGuardrailName   = attribute.Key("runlet.guardrail.name")
	keyGuardrailStage  = attribute.Key("runlet.guardrail.stage")
	keyGuardrailAction = attribute.Key("runlet.guardrail.action")
)

// guardSpan is a guardrail check in progress that called a model.
type guardSpan struct {
	span trace.Span
	ctx  context.Context // holds span
	chat *chatState      // the check's model call in progress
}

// checkCallID returns the tool call ID in a runlet.ModelStarted.Check, or
// "" for a check of the input or the output.
func checkCallID(check string) string {
	for _, stage := range []runlet.GuardrailStage{runlet.GuardToolCall, runlet.GuardToolResult} {
		if _, id, ok := strings.Cut(check, "/"+string(stage)+"/"); ok {
			return id
		}
	}
	return ""
}

// checkParent is the context of the span a check's span goes under. rs is
// locked.
func checkParent(rs *runState, callID string) context.Context {
	if spans := rs.tools[callID]; callID != "" && len(spans) > 0 {
		return trace.ContextWithSpan(rs.ctx, spans[len(spans)-1].span)
	}
	return rs.ctx
}

// guard returns the span of the check named check, opening it at h. rs is
// locked.
func (o *Observer) guard(rs *runState, h runlet.EventHeader, check string) *guardSpan {
	if g := rs.guards[check]; g != nil {
		return g
	}
	ctx, span := o.tracer.Start(checkParent(rs, checkCallID(check)), "guardrail",
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(h.Time))
	g := &guardSpan{span: span, ctx: ctx}
	if rs.guards == nil {
		rs.guards = make(map[string]*guardSpan)
	}
	rs.guards[check] = g
	return g
}

func (o *Observer) guardrailChecked(e *runlet.GuardrailChecked) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	check := e.Guardrail + "/" + string(e.Stage)
	if e.CallID != "" {
		check += "/" + e.CallID
	}
	var span trace.Span
	if g := rs.guards[check]; g != nil {
		delete(rs.guards, check)
		span = g.span
		if g.chat != nil {
			g.chat.span.End(trace.WithTimestamp(e.Time))
		}
	} else {
		_, span = o.tracer.Start(checkParent(rs, e.CallID), "guardrail",
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithTimestamp(e.Time.Add(-e.Duration)))
	}
	span.SetName(spanName("guardrail", e.Guardrail))
	attrs := []attribute.KeyValue{keyGuardrailName.String(e.Guardrail), keyGuardrailStage.String(string(e.Stage)),
		keyGuardrailAction.String(string(e.Action))}
	if e.CallID != "" {
		attrs = append(attrs, keyToolCallID.String(e.CallID))
	}
	switch {
	case e.Error != "":
		attrs = append(attrs, keyErrorType.String("guardrail_failed"))
		span.SetStatus(codes.Error, e.Error)
	case e.Action == runlet.GuardrailTrip:
		attrs = append(attrs, keyErrorType.String("guardrail_tripped"))
		span.SetStatus(codes.Error, orDefault(e.Message, "tripped"))
	}
	span.SetAttributes(attrs...)
	span.End(trace.WithTimestamp(e.Time))
}

func (o *Observer) outputWithdrawn(e *runlet.OutputWithdrawn) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	rs.span.AddEvent("runlet.output.withdrawn", trace.WithTimestamp(e.Time), trace.WithAttributes(
		keyGuardrailName.String(e.Guardrail), keyGuardrailStage.String(string(e.Stage))))
}

// endGuards ends the checks' spans still open as the run ends. rs is
// locked.
func endGuards(rs *runState, h runlet.EventHeader) {
	for _, g := range rs.guards {
		if g.chat != nil {
			g.chat.span.End(trace.WithTimestamp(h.Time))
		}
		g.span.SetStatus(codes.Error, "the run ended before the check")
		g.span.End(trace.WithTimestamp(h.Time))
	}
	rs.guards = nil
}
