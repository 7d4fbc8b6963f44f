// Package otel turns Runlet events into OpenTelemetry traces and metrics,
// following the OpenTelemetry semantic conventions for generative AI.
//
// An [Observer] is a [runlet.Observer]; add it to a runtime with
// [runlet.WithObservers]. For every run it records
//
//   - an "invoke_agent {agent}" span, from run.started (or run.resumed) to the
//     run's terminal event, a child of the span in the context given to the
//     run (so an HTTP handler's span becomes its parent);
//   - a "chat {model}" client span per model call, a child of the run span,
//     from model.started to model.finished, or to the terminal event if the
//     call failed (status Error); streamed calls also get
//     gen_ai.response.time_to_first_chunk, the only use of delta events;
//   - an "execute_tool {tool}" span per tool call, from tool.started to
//     tool.finished; error results set the span status to Error and
//     error.type to the [runlet.ToolErrorKind];
//   - for an agent called as a tool (see [runlet.Agent.AsTool]), an
//     "invoke_agent {agent}" span, from agent.started to agent.finished, a
//     child of the execute_tool span of the call that ran it, with its own
//     chat and execute_tool spans under it: one trace for the whole run;
//   - a "runlet.handoff" span event on the run span at each handoff (see
//     [runlet.Handoff]), with runlet.handoff.from and runlet.handoff.to;
//   - the gen_ai.client.token.usage histogram (input and output tokens of
//     every model call) and the gen_ai.client.operation.duration histogram
//     (seconds, for invoke_agent, chat and execute_tool operations);
//   - with a price table (see [runlet.WithPrices]), what each priced model
//     call cost: gen_ai.usage.cost.amount, gen_ai.usage.cost.currency and
//     gen_ai.usage.cost.source ("local") on its chat span, as proposed for
//     the GenAI conventions (open-telemetry/semantic-conventions-genai pull
//     request 443; not yet part of them, so the names may change), and the
//     runlet.gen_ai.client.cost counter. A call whose model has no price
//     gets no cost attribute rather than a zero. Run spans carry the run's
//     runlet.run.cost and, when some calls were not priced,
//     runlet.run.cost.unpriced (their count): the amount is then only the
//     known part. A run's span also splits its cost by agent (see
//     [runlet.Result].CostByAgent): at its end, one "runlet.agent.cost" span
//     event per agent that made calls (the run's, the agents it handed off
//     to and those it called as tools), with gen_ai.agent.name,
//     runlet.agent.cost, runlet.agent.cost.unpriced (when some of its calls
//     were not priced) and its gen_ai.usage.input_tokens and
//     gen_ai.usage.output_tokens; the events' costs sum to runlet.run.cost.
//
// A failed run's span has status Error and error.type set to the run's
// [runlet.RunFailed] ErrorType (the policy that stopped it, "timeout", the
// provider's HTTP status, ...); an interrupted run's span ends
// normally with runlet.run.status "interrupted" and runlet.run.pending. Run
// spans also carry runlet.run.id, runlet.run.turns and the run's token usage.
//
// Spans take their start and end times from the events' header times, so
// their timings are exact although observers run synchronously.
//
// Prompts, answers, tool arguments and tool results are not recorded unless
// [WithContent](true) is given, because they may hold personal data. With
// content on, each chat span gets a "gen_ai.client.inference.operation.details"
// span event carrying gen_ai.system_instructions, gen_ai.input.messages and
// gen_ai.output.messages (JSON, in the conventions' message format), tool
// spans get gen_ai.tool.call.arguments and gen_ai.tool.call.result, and run
// spans gen_ai.input.messages and gen_ai.output.messages. Request options
// (ModelRequest.Options) are never recorded, apart from the "model" name.
//
// A tool call whose arguments a person edited when approving it
// (runlet.ApproveWithArguments) has runlet.tool.call.edited true on its
// span, content or not; gen_ai.tool.call.arguments are then the arguments
// that ran, and with content on runlet.tool.call.original_arguments are the
// model's.
//
// The events carry no provider name; give one with [WithProviderName] to set
// gen_ai.provider.name. The request model is taken from the request option
// "model" when present, else from [WithRequestModel].
//
// One Observer serves any number of concurrent runs. Its per-run state is
// dropped at each run's terminal event.
package otel

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/runlet/runlet"
	otelglobal "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope name of the tracer and meter.
const ScopeName = "github.com/runlet/runlet/otel"

// Attribute keys from the GenAI semantic conventions, and Runlet's own.
const (
	keyOperation      = attribute.Key("gen_ai.operation.name")
	keyProvider       = attribute.Key("gen_ai.provider.name")
	keyAgentName      = attribute.Key("gen_ai.agent.name")
	keyConversationID = attribute.Key("gen_ai.conversation.id")
	keyRequestModel   = attribute.Key("gen_ai.request.model")
	keyTemperature    = attribute.Key("gen_ai.request.temperature")
	keyTopP           = attribute.Key("gen_ai.request.top_p")
	keyMaxTokens      = attribute.Key("gen_ai.request.max_tokens")
	keyStopSequences  = attribute.Key("gen_ai.request.stop_sequences")
	keyResponseID     = attribute.Key("gen_ai.response.id")
	keyResponseModel  = attribute.Key("gen_ai.response.model")
	keyFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	keyTTFC           = attribute.Key("gen_ai.response.time_to_first_chunk")
	keyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	keyCacheRead      = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheWrite     = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyReasoning      = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	keyTokenType      = attribute.Key("gen_ai.token.type")
	keyToolName       = attribute.Key("gen_ai.tool.name")
	keyToolCallID     = attribute.Key("gen_ai.tool.call.id")
	keyToolType       = attribute.Key("gen_ai.tool.type")
	keyToolArgs       = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult     = attribute.Key("gen_ai.tool.call.result")
	keySystemInstr    = attribute.Key("gen_ai.system_instructions")
	keyInputMessages  = attribute.Key("gen_ai.input.messages")
	keyOutputMessages = attribute.Key("gen_ai.output.messages")
	keyErrorType      = attribute.Key("error.type")
	keyCostAmount     = attribute.Key("gen_ai.usage.cost.amount")
	keyCostCurrency   = attribute.Key("gen_ai.usage.cost.currency")
	keyCostSource     = attribute.Key("gen_ai.usage.cost.source")

	keyRunID    = attribute.Key("runlet.run.id")
	keyStatus   = attribute.Key("runlet.run.status")
	keyResumed  = attribute.Key("runlet.run.resumed")
	keyTurns    = attribute.Key("runlet.run.turns")
	keyPending  = attribute.Key("runlet.run.pending")
	keyPolicy   = attribute.Key("runlet.run.policy")
	keyRunCost  = attribute.Key("runlet.run.cost")
	keyUnpriced = attribute.Key("runlet.run.cost.unpriced")

	keyToolEdited   = attribute.Key("runlet.tool.call.edited")
	keyToolOrigArgs = attribute.Key("runlet.tool.call.original_arguments")

	keyAgentCost     = attribute.Key("runlet.agent.cost")
	keyAgentUnpriced = attribute.Key("runlet.agent.cost.unpriced")
)

// Operation names.
const (
	opAgent = "invoke_agent"
	opChat  = "chat"
	opTool  = "execute_tool"
)

// eventDetails is the name of the span event carrying a model call's content.
const eventDetails = "gen_ai.client.inference.operation.details"

// Histogram bucket boundaries advised by the semantic conventions.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// Option configures an Observer.
type Option func(*config)

type config struct {
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	content  bool
	provider string
	model    string
	currency string
}

// WithTracerProvider sets the tracer provider; the default is the global one
// (go.opentelemetry.io/otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets the meter provider; the default is the global one
// (go.opentelemetry.io/otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithContent turns the recording of prompts, answers, tool arguments and
// tool results on or off. It is off by default: they may hold personal data.
func WithContent(on bool) Option {
	return func(c *config) { c.content = on }
}

// WithProviderName sets gen_ai.provider.name ("openai", "anthropic", ...) on
// chat spans and metrics.
func WithProviderName(name string) Option {
	return func(c *config) { c.provider = name }
}

// WithRequestModel sets gen_ai.request.model for model calls whose request
// has no "model" option.
func WithRequestModel(model string) Option {
	return func(c *config) { c.model = model }
}

// WithCurrency sets the ISO 4217 code of the price table's currency,
// recorded as gen_ai.usage.cost.currency and as the cost counter's unit
// ("USD" if unset, as in package pricing).
func WithCurrency(code string) Option {
	return func(c *config) { c.currency = code }
}

// Observer records runs as OpenTelemetry spans and metrics. It implements
// [runlet.Observer] and is safe for concurrent runs. Create it with
// [NewObserver].
type Observer struct {
	cfg        config
	tracer     trace.Tracer
	tokenUsage metric.Int64Histogram
	duration   metric.Float64Histogram
	cost       metric.Float64Counter

	mu   sync.Mutex
	runs map[string]*runState // by run ID; removed at the terminal event
}

// runState is what the Observer remembers of one run in progress.
type runState struct {
	mu    sync.Mutex
	span  trace.Span
	ctx   context.Context // holds span, parent of the run's child spans
	start time.Time
	chat  *chatState
	tools map[string][]toolSpan // open tool spans by call ID
	// guards are the guardrail checks in progress that called a model, by
	// runlet.ModelStarted.Check
	guards map[string]*guardSpan
}

// toolSpan is a tool call in progress.
type toolSpan struct {
	span  trace.Span
	start time.Time
}

// chatState is the model call in progress.
type chatState struct {
	span      trace.Span
	start     time.Time
	model     string
	streamed  bool
	sysInstr  string // JSON, with content on
	inputMsgs string // JSON, with content on
}

// NewObserver returns an Observer configured by opts.
func NewObserver(opts ...Option) *Observer {
	var cfg config
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.tp == nil {
		cfg.tp = otelglobal.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otelglobal.GetMeterProvider()
	}
	if cfg.currency == "" {
		cfg.currency = "USD"
	}
	o := &Observer{
		cfg:    cfg,
		tracer: cfg.tp.Tracer(ScopeName),
		runs:   make(map[string]*runState),
	}
	meter := cfg.mp.Meter(ScopeName)
	var err error
	o.tokenUsage, err = meter.Int64Histogram("gen_ai.client.token.usage",
		metric.WithDescription("Number of input and output tokens used."),
		metric.WithUnit("{token}"),
		metric.WithExplicitBucketBoundaries(tokenBuckets...))
	if err != nil {
		otelglobal.Handle(err)
		o.tokenUsage = metricnoop.Int64Histogram{}
	}
	o.duration, err = meter.Float64Histogram("gen_ai.client.operation.duration",
		metric.WithDescription("GenAI operation duration."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		otelglobal.Handle(err)
		o.duration = metricnoop.Float64Histogram{}
	}
	o.cost, err = meter.Float64Counter("runlet.gen_ai.client.cost",
		metric.WithDescription("What priced model calls cost, by the run's price table."),
		metric.WithUnit("{"+cfg.currency+"}"))
	if err != nil {
		otelglobal.Handle(err)
		o.cost = metricnoop.Float64Counter{}
	}
	return o
}

// Observe implements [runlet.Observer].
func (o *Observer) Observe(ctx context.Context, ev runlet.Event) {
	switch e := ev.(type) {
	case *runlet.RunStarted:
		o.startRun(ctx, e.EventHeader, e.SessionID, false, e.Input)
	case *runlet.RunResumed:
		o.startRun(ctx, e.EventHeader, e.SessionID, true, nil)
	case *runlet.AgentStarted:
		o.startRun(o.callContext(ctx, e.EventHeader), e.EventHeader, "", e.Resumed, e.Input)
	case *runlet.AgentFinished:
		errType := ""
		if e.Status == runlet.StateFailed {
			errType = orDefault(e.ErrorType, orDefault(e.Policy, "error"))
		}
		o.endRun(ctx, e.EventHeader, e.Result, errType, e.Policy, e.Error)
	case *runlet.HandoffOccurred:
		o.handoff(e)
	case *runlet.RunFinished:
		o.endRun(ctx, e.EventHeader, e.Result, "", "", "")
	case *runlet.RunInterrupted:
		o.endRun(ctx, e.EventHeader, e.Result, "", "", "")
	case *runlet.RunFailed:
		errType := e.ErrorType
		if errType == "" {
			errType = orDefault(e.Policy, "error")
		}
		o.endRun(ctx, e.EventHeader, e.Result, errType, e.Policy, e.Error)
	case *runlet.TextDelta, *runlet.ReasoningDelta, *runlet.ToolCallDelta:
		o.delta(*ev.Header())
	case *runlet.ModelStarted:
		o.modelStarted(e)
	case *runlet.ModelFinished:
		o.modelFinished(ctx, e)
	case *runlet.ToolStarted:
		o.toolStarted(e)
	case *runlet.ToolFinished:
		o.toolFinished(ctx, e)
	case *runlet.GuardrailChecked:
		o.guardrailChecked(e)
	case *runlet.OutputWithdrawn:
		o.outputWithdrawn(e)
	case *runlet.ContextPrepared:
		if e.Changed {
			o.contextPrepared(e)
		}
	}
}

// runKey identifies the agent an event belongs to: the run's own, or one
// it called as a tool (see runlet.Agent.AsTool), by its call path.
func runKey(h runlet.EventHeader) string {
	if h.CallPath == "" {
		return h.RunID
	}
	return h.RunID + "\x00" + h.CallPath
}

// callContext returns ctx holding the execute_tool span of the call that
// runs the agent h belongs to, so its invoke_agent span is that span's
// child; ctx itself if that span is unknown.
func (o *Observer) callContext(ctx context.Context, h runlet.EventHeader) context.Context {
	parent, call := h, h.CallPath
	parent.CallPath = ""
	if i := strings.LastIndexByte(h.CallPath, '/'); i >= 0 {
		parent.CallPath, call = h.CallPath[:i], h.CallPath[i+1:]
	}
	rs := o.lookup(runKey(parent))
	if rs == nil {
		return ctx
	}
	defer rs.mu.Unlock()
	if spans := rs.tools[call]; len(spans) > 0 {
		return trace.ContextWithSpan(ctx, spans[len(spans)-1].span)
	}
	return trace.ContextWithSpan(ctx, rs.span)
}

// lookup returns the state of a run (or nested agent) in progress, locked,
// or nil.
func (o *Observer) lookup(key string) *runState {
	o.mu.Lock()
	rs := o.runs[key]
	o.mu.Unlock()
	if rs != nil {
		rs.mu.Lock()
	}
	return rs
}

// spanName returns "{operation} {target}", or the operation alone.
func spanName(op, target string) string {
	if target == "" {
		return op
	}
	return op + " " + target
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
