package otel

import (
	"context"
	"maps"
	"slices"

	"github.com/runlet/runlet"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Run spans: one invoke_agent span per run, from run.started to its end.

func (o *Observer) startRun(ctx context.Context, h runlet.EventHeader, sessionID string, resumed bool, input []runlet.Message) {
	rs := o.newRun(ctx, h, sessionID, resumed, input)
	o.mu.Lock()
	old := o.runs[runKey(h)]
	o.runs[runKey(h)] = rs
	o.mu.Unlock()
	if old != nil { // a run ID reused while its run was in progress
		old.mu.Lock()
		o.finish(ctx, old, h, nil, "superseded", "", "run ID reused by another run")
		old.mu.Unlock()
	}
}

// newRun starts a run span, a child of the span in ctx.
func (o *Observer) newRun(ctx context.Context, h runlet.EventHeader, sessionID string, resumed bool, input []runlet.Message) *runState {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, keyOperation.String(opAgent), keyRunID.String(h.RunID))
	if h.Agent != "" {
		attrs = append(attrs, keyAgentName.String(h.Agent))
	}
	if sessionID != "" {
		attrs = append(attrs, keyConversationID.String(sessionID))
	}
	if o.cfg.provider != "" {
		attrs = append(attrs, keyProvider.String(o.cfg.provider))
	}
	if resumed {
		attrs = append(attrs, keyResumed.Bool(true))
	}
	if o.cfg.content && len(input) > 0 {
		attrs = append(attrs, keyInputMessages.String(messagesJSON(input, "")))
	}
	_, span := o.tracer.Start(ctx, spanName(opAgent, h.Agent),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(h.Time),
		trace.WithAttributes(attrs...))
	return &runState{span: span, ctx: trace.ContextWithSpan(context.Background(), span), start: h.Time}
}

// endRun ends a run's spans at its terminal event. For a failed run, errType
// is its error.type and errMsg the error, which becomes the status
// description (run errors never contain credentials).
func (o *Observer) endRun(ctx context.Context, h runlet.EventHeader, res *runlet.Result, errType, policy, errMsg string) {
	o.mu.Lock()
	rs := o.runs[runKey(h)]
	delete(o.runs, runKey(h))
	o.mu.Unlock()
	if rs == nil {
		// A run that failed before it started (a resume of an unknown
		// run, say): record it as a span without children.
		rs = o.newRun(ctx, h, "", false, nil)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	o.finish(ctx, rs, h, res, errType, policy, errMsg)
}

// finish ends the run's open spans, then the run span. rs is locked.
func (o *Observer) finish(ctx context.Context, rs *runState, h runlet.EventHeader, res *runlet.Result, errType, policy, errMsg string) {
	for _, spans := range rs.tools {
		for _, t := range spans {
			t.span.SetAttributes(keyErrorType.String(orDefault(errType, "run_ended")))
			t.span.SetStatus(codes.Error, "the run ended before the tool finished")
			t.span.End(trace.WithTimestamp(h.Time))
		}
	}
	rs.tools = nil
	endGuards(rs, h)
	if c := rs.chat; c != nil {
		rs.chat = nil
		et := orDefault(errType, "run_ended")
		c.span.SetAttributes(keyErrorType.String(et))
		c.span.SetStatus(codes.Error, "the model call did not complete")
		if o.cfg.content && c.inputMsgs != "" {
			c.span.AddEvent(eventDetails, trace.WithTimestamp(h.Time), trace.WithAttributes(
				keySystemInstr.String(c.sysInstr), keyInputMessages.String(c.inputMsgs)))
		}
		c.span.End(trace.WithTimestamp(h.Time))
		o.recordDuration(ctx, h.Time.Sub(c.start), o.chatMetricAttrs(c.model, "", et))
	}

	attrs := make([]attribute.KeyValue, 0, 8)
	if res != nil {
		attrs = append(attrs, keyStatus.String(string(res.Status)), keyTurns.Int(res.Turns),
			keyInputTokens.Int(res.Usage.InputTokens), keyOutputTokens.Int(res.Usage.OutputTokens))
		if len(res.Pending) > 0 {
			attrs = append(attrs, keyPending.Int(len(res.Pending)))
		}
		if res.Usage.Requests > 0 {
			attrs = append(attrs, keyRunCost.Float64(res.Cost.Amount))
			if res.Cost.Unpriced > 0 {
				attrs = append(attrs, keyUnpriced.Int(res.Cost.Unpriced))
			}
		}
		if o.cfg.content && res.Status == runlet.StateFinished {
			attrs = append(attrs, keyOutputMessages.String(outputJSON(runlet.AssistantText(res.Output), "stop")))
		}
	}
	if policy != "" {
		attrs = append(attrs, keyPolicy.String(policy))
	}
	metricAttrs := []attribute.KeyValue{keyOperation.String(opAgent)}
	if h.Agent != "" {
		metricAttrs = append(metricAttrs, keyAgentName.String(h.Agent))
	}
	if o.cfg.provider != "" {
		metricAttrs = append(metricAttrs, keyProvider.String(o.cfg.provider))
	}
	if errType != "" {
		attrs = append(attrs, keyErrorType.String(errType))
		metricAttrs = append(metricAttrs, keyErrorType.String(errType))
		rs.span.SetStatus(codes.Error, orDefault(errMsg, errType))
	}
	if res != nil {
		agentCosts(rs.span, h, res)
	}
	rs.span.SetAttributes(attrs...)
	rs.span.End(trace.WithTimestamp(h.Time))
	o.recordDuration(ctx, h.Time.Sub(rs.start), metricAttrs)
}

// agentCosts adds a run's cost by agent to its span: one runlet.agent.cost
// event per agent, in name order.
func agentCosts(span trace.Span, h runlet.EventHeader, res *runlet.Result) {
	for _, name := range slices.Sorted(maps.Keys(res.CostByAgent)) {
		c, u := res.CostByAgent[name], res.UsageByAgent[name]
		attrs := []attribute.KeyValue{keyAgentName.String(name), keyAgentCost.Float64(c.Amount),
			keyInputTokens.Int(u.InputTokens), keyOutputTokens.Int(u.OutputTokens)}
		if c.Unpriced > 0 {
			attrs = append(attrs, keyAgentUnpriced.Int(c.Unpriced))
		}
		span.AddEvent("runlet.agent.cost", trace.WithTimestamp(h.Time), trace.WithAttributes(attrs...))
	}
}

func (o *Observer) delta(h runlet.EventHeader) {
	rs := o.lookup(runKey(h))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	if c := rs.chat; c != nil && !c.streamed {
		c.streamed = true
		c.span.SetAttributes(keyTTFC.Float64(h.Time.Sub(c.start).Seconds()))
	}
}

func (o *Observer) contextPrepared(e *runlet.ContextPrepared) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	rs.span.AddEvent("runlet.context.prepared", trace.WithTimestamp(e.Time), trace.WithAttributes(
		attribute.Int("runlet.context.messages_before", e.MessagesBefore),
		attribute.Int("runlet.context.messages_after", e.MessagesAfter),
		attribute.StringSlice("runlet.context.notes", e.Notes)))
}

func (o *Observer) handoff(e *runlet.HandoffOccurred) {
	rs := o.lookup(runKey(e.EventHeader))
	if rs == nil {
		return
	}
	defer rs.mu.Unlock()
	rs.span.AddEvent("runlet.handoff", trace.WithTimestamp(e.Time), trace.WithAttributes(
		attribute.String("runlet.handoff.from", e.From),
		attribute.String("runlet.handoff.to", e.To)))
}
