package otel

import (
	"context"

	"github.com/runlet/runlet"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Tool spans: one execute_tool span per tool call.

func (o *Observer) toolStarted(e *runlet.ToolStarted) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, keyOperation.String(opTool), keyToolName.String(e.Call.Name),
		keyToolType.String("function"))
	if e.Call.ID != "" {
		attrs = append(attrs, keyToolCallID.String(e.Call.ID))
	}
	if o.cfg.content && len(e.Call.Arguments) > 0 {
		attrs = append(attrs, keyToolArgs.String(string(e.Call.Arguments)))
	}
	if len(e.Call.OriginalArguments) > 0 { // a person edited the call
		attrs = append(attrs, keyToolEdited.Bool(true))
		if o.cfg.content {
			attrs = append(attrs, keyToolOrigArgs.String(string(e.Call.OriginalArguments)))
		}
	}
	_, span := o.tracer.Start(rs.ctx, spanName(opTool, e.Call.Name),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(e.Time),
		trace.WithAttributes(attrs...))
	if rs.tools == nil {
		rs.tools = make(map[string][]toolSpan)
	}
	rs.tools[e.Call.ID] = append(rs.tools[e.Call.ID], toolSpan{span, e.Time})
}

func (o *Observer) toolFinished(ctx context.Context, e *runlet.ToolFinished) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	spans := rs.tools[e.Call.ID]
	if len(spans) == 0 {
		return
	}
	span, start := spans[0].span, spans[0].start
	if len(spans) == 1 {
		delete(rs.tools, e.Call.ID)
	} else {
		rs.tools[e.Call.ID] = spans[1:]
	}

	metricAttrs := []attribute.KeyValue{keyOperation.String(opTool), keyToolName.String(e.Call.Name)}
	if e.Result.IsError || e.ErrorKind != "" {
		errType := orDefault(string(e.ErrorKind), "error")
		span.SetAttributes(keyErrorType.String(errType))
		span.SetStatus(codes.Error, errType)
		metricAttrs = append(metricAttrs, keyErrorType.String(errType))
	}
	if o.cfg.content {
		span.SetAttributes(keyToolResult.String(e.Result.Content))
	}
	span.End(trace.WithTimestamp(e.Time))
	d := e.Duration
	if d <= 0 {
		d = e.Time.Sub(start)
	}
	o.recordDuration(ctx, d, metricAttrs)
}
