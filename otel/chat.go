package otel

import (
	"context"
	"time"

	"github.com/runlet/runlet"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Chat spans and metrics: one span per model call.

// requestModel returns the model a request names, else the configured one.
func (o *Observer) requestModel(req *runlet.ModelRequest) string {
	if req != nil {
		if m, ok := req.Options["model"].(string); ok && m != "" {
			return m
		}
	}
	return o.cfg.model
}

func (o *Observer) modelStarted(e *runlet.ModelStarted) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	c := &chatState{start: e.Time, model: o.requestModel(e.Request)}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, keyOperation.String(opChat))
	if o.cfg.provider != "" {
		attrs = append(attrs, keyProvider.String(o.cfg.provider))
	}
	if c.model != "" {
		attrs = append(attrs, keyRequestModel.String(c.model))
	}
	if e.Agent != "" {
		attrs = append(attrs, keyAgentName.String(e.Agent))
	}
	if req := e.Request; req != nil {
		if req.Temperature != nil {
			attrs = append(attrs, keyTemperature.Float64(*req.Temperature))
		}
		if req.TopP != nil {
			attrs = append(attrs, keyTopP.Float64(*req.TopP))
		}
		if req.MaxOutputTokens > 0 {
			attrs = append(attrs, keyMaxTokens.Int(req.MaxOutputTokens))
		}
		if len(req.StopSequences) > 0 {
			attrs = append(attrs, keyStopSequences.StringSlice(req.StopSequences))
		}
		if o.cfg.content {
			c.sysInstr = instructionsJSON(req.Instructions)
			c.inputMsgs = messagesJSON(req.Messages, "")
		}
	}
	// The agent's calls come one at a time; a guardrail check's calls may
	// run beside them, and go under the check's span.
	parent, slot := rs.ctx, &rs.chat
	if e.Check != "" {
		g := o.guard(rs, e.EventHeader, e.Check)
		parent, slot = g.ctx, &g.chat
	}
	if *slot != nil { // unreachable with the runtime: one call at a time
		(*slot).span.End(trace.WithTimestamp(e.Time))
	}
	_, c.span = o.tracer.Start(parent, spanName(opChat, c.model),
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(e.Time),
		trace.WithAttributes(attrs...))
	*slot = c
}

func (o *Observer) modelFinished(ctx context.Context, e *runlet.ModelFinished) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	slot := &rs.chat
	if e.Check != "" {
		g := rs.guards[e.Check]
		if g == nil {
			return
		}
		slot = &g.chat
	}
	c := *slot
	if c == nil {
		return
	}
	*slot = nil
	resp := e.Response
	if resp == nil {
		resp = &runlet.ModelResponse{}
	}
	u := resp.Usage
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs,
		keyFinishReasons.StringSlice([]string{string(resp.FinishReason)}),
		keyInputTokens.Int(u.InputTokens),
		keyOutputTokens.Int(u.OutputTokens))
	if resp.ID != "" {
		attrs = append(attrs, keyResponseID.String(resp.ID))
	}
	if resp.Model != "" {
		attrs = append(attrs, keyResponseModel.String(resp.Model))
	}
	if u.CachedInputTokens > 0 {
		attrs = append(attrs, keyCacheRead.Int(u.CachedInputTokens))
	}
	if u.CacheWriteTokens > 0 {
		attrs = append(attrs, keyCacheWrite.Int(u.CacheWriteTokens))
	}
	if u.ReasoningTokens > 0 {
		attrs = append(attrs, keyReasoning.Int(u.ReasoningTokens))
	}
	priced := e.Cost.Known()
	if priced {
		attrs = append(attrs, keyCostAmount.Float64(e.Cost.Amount),
			keyCostCurrency.String(o.cfg.currency), keyCostSource.String("local"))
	}
	c.span.SetAttributes(attrs...)
	if o.cfg.content {
		c.span.AddEvent(eventDetails, trace.WithTimestamp(e.Time), trace.WithAttributes(
			keySystemInstr.String(c.sysInstr),
			keyInputMessages.String(c.inputMsgs),
			keyOutputMessages.String(outputJSON(resp.Message, string(resp.FinishReason)))))
	}
	c.span.End(trace.WithTimestamp(e.Time))

	mattrs := o.chatMetricAttrs(c.model, resp.Model, "")
	d := e.Duration
	if d <= 0 {
		d = e.Time.Sub(c.start)
	}
	o.recordDuration(ctx, d, mattrs)
	if u.InputTokens > 0 || u.OutputTokens > 0 {
		n := len(mattrs)
		in := append(mattrs[:n:n], keyTokenType.String("input"))
		out := append(mattrs[:n:n], keyTokenType.String("output"))
		o.tokenUsage.Record(ctx, int64(u.InputTokens), metric.WithAttributeSet(attribute.NewSet(in...)))
		o.tokenUsage.Record(ctx, int64(u.OutputTokens), metric.WithAttributeSet(attribute.NewSet(out...)))
	}
	if priced {
		o.cost.Add(ctx, e.Cost.Amount, metric.WithAttributeSet(attribute.NewSet(mattrs...)))
	}
}

// chatMetricAttrs returns the attributes of a chat operation's measurements.
func (o *Observer) chatMetricAttrs(reqModel, respModel, errType string) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, keyOperation.String(opChat))
	if o.cfg.provider != "" {
		attrs = append(attrs, keyProvider.String(o.cfg.provider))
	}
	if reqModel != "" {
		attrs = append(attrs, keyRequestModel.String(reqModel))
	}
	if respModel != "" {
		attrs = append(attrs, keyResponseModel.String(respModel))
	}
	if errType != "" {
		attrs = append(attrs, keyErrorType.String(errType))
	}
	return attrs
}

func (o *Observer) recordDuration(ctx context.Context, d time.Duration, attrs []attribute.KeyValue) {
	o.duration.Record(ctx, d.Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
}
