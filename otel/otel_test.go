package otel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is an Observer wired to in-memory exporters.
type harness struct {
	obs    *Observer
	tp     *sdktrace.TracerProvider
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		_ = h.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	h.obs = NewObserver(append([]Option{WithTracerProvider(h.tp), WithMeterProvider(mp)}, opts...)...)
	return h
}

func (h *harness) runtime(opts ...runlet.RuntimeOption) *runlet.Runtime {
	return runlet.NewRuntime(append([]runlet.RuntimeOption{runlet.WithObservers(h.obs), runlet.WithStore(runlet.NewMemoryStore())}, opts...)...)
}

// assertNoState fails if the Observer still holds any run.
func (h *harness) assertNoState(t *testing.T) {
	t.Helper()
	h.obs.mu.Lock()
	defer h.obs.mu.Unlock()
	if len(h.obs.runs) != 0 {
		t.Fatalf("observer holds %d runs after they ended", len(h.obs.runs))
	}
}

func (h *harness) span(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range h.spans.GetSpans() {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q; have %v", len(found), name, names(h.spans.GetSpans()))
	}
	return found[0]
}

func (h *harness) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// wantAttrs checks that s has every attribute of want (values as Emit prints them).
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	got := attrs(s.Attributes)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", s.Name, k, got[k], v)
		}
	}
}

type weatherIn struct {
	City string `json:"city"`
}

func weatherTool() runlet.Tool {
	return runlet.NewTool("get_weather", "Weather in a city.", func(ctx context.Context, in weatherIn) (string, error) {
		return "sunny in " + in.City, nil
	})
}

func weatherAgent(replies ...runlettest.Reply) *runlet.Agent {
	if len(replies) == 0 {
		replies = []runlettest.Reply{
			runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`)),
			runlettest.TextReply("Sunny in Paris."),
		}
	}
	m := runlettest.NewModel(replies...)
	m.ChunkSize = 3
	return &runlet.Agent{
		Name:    "assistant",
		Model:   m,
		Tools:   []runlet.Tool{weatherTool()},
		Options: map[string]any{"model": "m-1"},
	}
}

// run runs agent on input, with Run or Stream.
func run(ctx context.Context, rt *runlet.Runtime, agent *runlet.Agent, input string, stream bool, opts ...runlet.RunOption) error {
	if !stream {
		_, err := rt.Run(ctx, agent, input, opts...)
		return err
	}
	var last error
	for _, err := range rt.Stream(ctx, agent, input, opts...) {
		last = err
	}
	return last
}

func TestSpanTreeAndMetrics(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			h := newHarness(t, WithProviderName("fake"))
			// The caller's span (an HTTP handler, say) becomes the run's parent.
			ctx, parent := h.tp.Tracer("test").Start(context.Background(), "GET /ask")
			if err := run(ctx, h.runtime(), weatherAgent(), "Weather in Paris?", stream, runlet.WithSession("s-1")); err != nil {
				t.Fatal(err)
			}
			parent.End()
			h.assertNoState(t)

			if got := names(h.spans.GetSpans()); strings.Join(got, ",") != "chat m-1,execute_tool get_weather,chat m-1,invoke_agent assistant,GET /ask" {
				t.Fatalf("spans (in end order) = %v", got)
			}
			root := h.span(t, "invoke_agent assistant")
			if root.Parent.SpanID() != parent.SpanContext().SpanID() || root.SpanContext.TraceID() != parent.SpanContext().TraceID() {
				t.Error("run span is not a child of the caller's span")
			}
			if root.SpanKind != trace.SpanKindInternal || root.Status.Code != codes.Unset {
				t.Errorf("run span kind %v status %v", root.SpanKind, root.Status)
			}
			wantAttrs(t, root, map[string]string{
				"gen_ai.operation.name":     "invoke_agent",
				"gen_ai.agent.name":         "assistant",
				"gen_ai.provider.name":      "fake",
				"gen_ai.conversation.id":    "s-1",
				"runlet.run.status":         "finished",
				"runlet.run.turns":          "2",
				"gen_ai.usage.input_tokens": "20",
			})
			if attrs(root.Attributes)["runlet.run.id"] == "" {
				t.Error("no run ID")
			}

			spans := h.spans.GetSpans()
			chat1, tool, chat2 := spans[0], spans[1], spans[2]
			for _, s := range []tracetest.SpanStub{chat1, tool, chat2} {
				if s.Parent.SpanID() != root.SpanContext.SpanID() || s.SpanContext.TraceID() != root.SpanContext.TraceID() {
					t.Errorf("%s is not a child of the run span", s.Name)
				}
				if s.StartTime.Before(root.StartTime) || s.EndTime.After(root.EndTime) || s.EndTime.Before(s.StartTime) {
					t.Errorf("%s [%v, %v] outside run [%v, %v]", s.Name, s.StartTime, s.EndTime, root.StartTime, root.EndTime)
				}
			}
			if tool.StartTime.Before(chat1.EndTime) || chat2.StartTime.Before(tool.EndTime) {
				t.Error("spans out of order")
			}
			if chat1.SpanKind != trace.SpanKindClient {
				t.Errorf("chat span kind %v", chat1.SpanKind)
			}
			wantAttrs(t, chat1, map[string]string{
				"gen_ai.operation.name":          "chat",
				"gen_ai.provider.name":           "fake",
				"gen_ai.request.model":           "m-1",
				"gen_ai.response.finish_reasons": `["tool_calls"]`,
				"gen_ai.usage.input_tokens":      "10",
			})
			wantAttrs(t, chat2, map[string]string{
				"gen_ai.response.finish_reasons": `["stop"]`,
				"gen_ai.usage.input_tokens":      "10",
				"gen_ai.usage.output_tokens":     "5",
			})
			if _, ok := attrs(chat2.Attributes)["gen_ai.response.time_to_first_chunk"]; ok != stream {
				t.Errorf("time_to_first_chunk present = %v, streaming = %v", ok, stream)
			}
			wantAttrs(t, tool, map[string]string{
				"gen_ai.operation.name": "execute_tool",
				"gen_ai.tool.name":      "get_weather",
				"gen_ai.tool.call.id":   "c1",
				"gen_ai.tool.type":      "function",
			})
			if tool.Status.Code != codes.Unset {
				t.Errorf("tool status %v", tool.Status)
			}

			// Metrics: token usage per type, durations per operation.
			ms := h.metrics(t)
			usage, ok := ms["gen_ai.client.token.usage"].(metricdata.Histogram[int64])
			if !ok {
				t.Fatalf("token usage metric: %T", ms["gen_ai.client.token.usage"])
			}
			sums := map[string]int64{}
			for _, dp := range usage.DataPoints {
				typ, _ := dp.Attributes.Value("gen_ai.token.type")
				model, _ := dp.Attributes.Value("gen_ai.request.model")
				op, _ := dp.Attributes.Value("gen_ai.operation.name")
				if model.AsString() != "m-1" || op.AsString() != "chat" || dp.Count != 2 {
					t.Errorf("token data point %v count %d", dp.Attributes.ToSlice(), dp.Count)
				}
				sums[typ.AsString()] += dp.Sum
			}
			if sums["input"] != 20 || sums["output"] != 10 || len(sums) != 2 {
				t.Errorf("token sums %v", sums)
			}
			dur, ok := ms["gen_ai.client.operation.duration"].(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("duration metric: %T", ms["gen_ai.client.operation.duration"])
			}
			counts := map[string]uint64{}
			for _, dp := range dur.DataPoints {
				op, _ := dp.Attributes.Value("gen_ai.operation.name")
				counts[op.AsString()] += dp.Count
			}
			if counts["chat"] != 2 || counts["invoke_agent"] != 1 || counts["execute_tool"] != 1 {
				t.Errorf("duration counts %v", counts)
			}
		})
	}
}

func TestFailedRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		agent     *runlet.Agent
		opts      []runlet.RuntimeOption
		errType   string
		desc      string
		chatError bool
	}{
		{"provider error", weatherAgent(runlettest.ErrorReply(&runlet.ProviderError{Provider: "fake", StatusCode: 429, Message: "slow down"})), nil, "429", "slow down", true},
		{"max turns", weatherAgent(), []runlet.RuntimeOption{runlet.WithMaxTurns(1)}, "max_turns", "max_turns", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if err := run(context.Background(), h.runtime(tc.opts...), tc.agent, "hi", false); err == nil {
				t.Fatal("run succeeded")
			}
			h.assertNoState(t)
			root := h.span(t, "invoke_agent assistant")
			if root.Status.Code != codes.Error || !strings.Contains(root.Status.Description, tc.desc) {
				t.Errorf("run status %v, want Error with %q", root.Status, tc.desc)
			}
			wantAttrs(t, root, map[string]string{"error.type": tc.errType, "runlet.run.status": "failed"})
			chat := h.span(t, "chat m-1")
			if (chat.Status.Code == codes.Error) != tc.chatError {
				t.Errorf("chat status %v", chat.Status)
			}
			if tc.chatError {
				wantAttrs(t, chat, map[string]string{"error.type": tc.errType})
				if chat.EndTime != root.EndTime {
					t.Error("failed chat span does not end with the run")
				}
			}
			dur := h.metrics(t)["gen_ai.client.operation.duration"].(metricdata.Histogram[float64])
			var failed int
			for _, dp := range dur.DataPoints {
				if v, ok := dp.Attributes.Value("error.type"); ok && v.AsString() == tc.errType {
					failed++
				}
			}
			if want := map[bool]int{true: 2, false: 1}[tc.chatError]; failed != want {
				t.Errorf("%d duration points with error.type, want %d", failed, want)
			}
		})
	}
}

func TestUnknownTool(t *testing.T) {
	h := newHarness(t)
	agent := weatherAgent(
		runlettest.ToolCallReply(runlettest.Call("c9", "nope", `{}`)),
		runlettest.TextReply("Sorry."),
	)
	if err := run(context.Background(), h.runtime(), agent, "hi", true); err != nil {
		t.Fatal(err)
	}
	tool := h.span(t, "execute_tool nope")
	if tool.Status.Code != codes.Error || tool.Status.Description != "unknown_tool" {
		t.Errorf("tool status %v", tool.Status)
	}
	wantAttrs(t, tool, map[string]string{"error.type": "unknown_tool", "gen_ai.tool.call.id": "c9"})
	// The run goes on and completes.
	root := h.span(t, "invoke_agent assistant")
	if root.Status.Code != codes.Unset {
		t.Errorf("run status %v", root.Status)
	}
}

func TestConcurrentRuns(t *testing.T) {
	h := newHarness(t)
	rt := h.runtime()
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := run(context.Background(), rt, weatherAgent(), "hi", i%2 == 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	h.assertNoState(t)

	spans := h.spans.GetSpans()
	if len(spans) != 4*n {
		t.Fatalf("%d spans, want %d", len(spans), 4*n)
	}
	roots := map[trace.TraceID]trace.SpanID{}
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "invoke_agent") {
			if s.Parent.IsValid() {
				t.Error("run span has a parent")
			}
			roots[s.SpanContext.TraceID()] = s.SpanContext.SpanID()
		}
	}
	if len(roots) != n {
		t.Fatalf("%d traces, want %d", len(roots), n)
	}
	perTrace := map[trace.TraceID]int{}
	for _, s := range spans {
		if !strings.HasPrefix(s.Name, "invoke_agent") {
			if roots[s.SpanContext.TraceID()] != s.Parent.SpanID() {
				t.Errorf("%s is not a child of its trace's run span", s.Name)
			}
			perTrace[s.SpanContext.TraceID()]++
		}
	}
	for id, c := range perTrace {
		if c != 3 {
			t.Errorf("trace %s has %d child spans", id, c)
		}
	}
}

func TestInterruptAndResume(t *testing.T) {
	h := newHarness(t)
	store := runlet.NewMemoryStore()
	rt := h.runtime(runlet.WithStore(store))
	del := runlet.NewTool("delete_file", "Deletes a file.", func(ctx context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		return "deleted", nil
	}, runlet.WithApproval())
	agent := weatherAgent(
		runlettest.ToolCallReply(runlettest.Call("d1", "delete_file", `{"path":"/tmp/a"}`)),
		runlettest.TextReply("Done."),
	)
	agent.Tools = append(agent.Tools, del)
	res, err := rt.Run(context.Background(), agent, "clean up")
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("run: %v %v", res.Status, err)
	}
	h.assertNoState(t)
	first := h.span(t, "invoke_agent assistant")
	if first.Status.Code != codes.Unset {
		t.Errorf("interrupted run status %v", first.Status)
	}
	wantAttrs(t, first, map[string]string{"runlet.run.status": "interrupted", "runlet.run.pending": "1"})

	h.spans.Reset()
	if _, err := rt.Resume(context.Background(), agent, res.RunID, runlet.Approve("d1")); err != nil {
		t.Fatal(err)
	}
	h.assertNoState(t)
	resumed := h.span(t, "invoke_agent assistant")
	wantAttrs(t, resumed, map[string]string{"runlet.run.resumed": "true", "runlet.run.status": "finished", "runlet.run.id": res.RunID})
	if tool := h.span(t, "execute_tool delete_file"); tool.Parent.SpanID() != resumed.SpanContext.SpanID() {
		t.Error("resumed tool span is not a child of the resumed run span")
	}

	// Resuming again fails before the run starts: still one error span.
	h.spans.Reset()
	if _, err := rt.Resume(context.Background(), agent, res.RunID, runlet.Approve("d1")); err == nil {
		t.Fatal("second resume succeeded")
	}
	h.assertNoState(t)
	if s := h.span(t, "invoke_agent assistant"); s.Status.Code != codes.Error {
		t.Errorf("failed resume status %v", s.Status)
	}
}

func TestCancelDuringTool(t *testing.T) {
	h := newHarness(t)
	slow := runlet.NewTool("slow", "Waits.", func(ctx context.Context, in struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	agent := weatherAgent(runlettest.ToolCallReply(runlettest.Call("s1", "slow", `{}`)))
	agent.Tools = []runlet.Tool{slow}
	for ev := range h.runtime().Stream(context.Background(), agent, "go") {
		if _, ok := ev.(*runlet.ToolStarted); ok {
			break // cancels the run
		}
	}
	h.assertNoState(t)
	tool := h.span(t, "execute_tool slow")
	if tool.Status.Code != codes.Error || tool.EndTime.IsZero() {
		t.Errorf("tool span after cancel: status %v end %v", tool.Status, tool.EndTime)
	}
	if root := h.span(t, "invoke_agent assistant"); root.Status.Code != codes.Error {
		t.Errorf("run status %v", root.Status)
	}
}

// allText returns every string recorded in spans: names, attributes, events,
// status descriptions.
func allText(spans tracetest.SpanStubs) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Name + "\n" + s.Status.Description + "\n")
		for _, kv := range s.Attributes {
			b.WriteString(kv.Value.String() + "\n")
		}
		for _, e := range s.Events {
			b.WriteString(e.Name + "\n")
			for _, kv := range e.Attributes {
				b.WriteString(kv.Value.String() + "\n")
			}
		}
	}
	return b.String()
}

func TestContent(t *testing.T) {
	const (
		prompt  = "PROMPT-my-home-address"
		system  = "SYSTEM-INSTRUCTIONS-TEXT"
		argCity = "ARG-CITY-Lyon"
		answer  = "ANSWER-TEXT-42"
		toolOut = "sunny in " + argCity
		apiKey  = "sk-SECRET-never-record"
	)
	newAgent := func() *runlet.Agent {
		a := weatherAgent(
			runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"`+argCity+`"}`)),
			runlettest.TextReply(answer),
		)
		a.Instructions = system
		a.Options["api_key"] = apiKey // a provider option: never recorded
		return a
	}
	private := []string{prompt, system, argCity, answer}

	t.Run("off by default", func(t *testing.T) {
		h := newHarness(t)
		if err := run(context.Background(), h.runtime(), newAgent(), prompt, true); err != nil {
			t.Fatal(err)
		}
		text := allText(h.spans.GetSpans())
		for _, s := range append(private, apiKey) {
			if strings.Contains(text, s) {
				t.Errorf("recorded %q without WithContent", s)
			}
		}
	})

	t.Run("on", func(t *testing.T) {
		h := newHarness(t, WithContent(true))
		if err := run(context.Background(), h.runtime(), newAgent(), prompt, false); err != nil {
			t.Fatal(err)
		}
		text := allText(h.spans.GetSpans())
		for _, s := range private {
			if !strings.Contains(text, s) {
				t.Errorf("%q not recorded with WithContent(true)", s)
			}
		}
		if strings.Contains(text, apiKey) {
			t.Error("recorded a provider option (API key)")
		}

		// The second chat span's details event has the conventions' shapes.
		var chat tracetest.SpanStub
		for _, s := range h.spans.GetSpans() {
			if s.Name == "chat m-1" {
				chat = s // the last one
			}
		}
		if len(chat.Events) != 1 || chat.Events[0].Name != eventDetails {
			t.Fatalf("chat events %+v", chat.Events)
		}
		ev := attrs(chat.Events[0].Attributes)
		var sys []map[string]any
		var in, out []struct {
			Role         string           `json:"role"`
			Parts        []map[string]any `json:"parts"`
			FinishReason string           `json:"finish_reason"`
		}
		for k, v := range map[string]any{"gen_ai.system_instructions": &sys, "gen_ai.input.messages": &in, "gen_ai.output.messages": &out} {
			if err := json.Unmarshal([]byte(ev[k]), v); err != nil {
				t.Fatalf("%s = %q: %v", k, ev[k], err)
			}
		}
		if len(sys) != 1 || sys[0]["content"] != system {
			t.Errorf("system instructions %v", sys)
		}
		if len(in) != 3 || in[0].Role != "user" || in[0].Parts[0]["content"] != prompt ||
			in[1].Parts[0]["type"] != "tool_call" || in[1].Parts[0]["arguments"].(map[string]any)["city"] != argCity ||
			in[2].Role != "tool" || in[2].Parts[0]["type"] != "tool_call_response" || in[2].Parts[0]["response"] != toolOut {
			t.Errorf("input messages %s", ev["gen_ai.input.messages"])
		}
		if len(out) != 1 || out[0].Role != "assistant" || out[0].FinishReason != "stop" || out[0].Parts[0]["content"] != answer {
			t.Errorf("output messages %s", ev["gen_ai.output.messages"])
		}
		wantAttrs(t, h.span(t, "execute_tool get_weather"), map[string]string{
			"gen_ai.tool.call.arguments": `{"city":"` + argCity + `"}`,
			"gen_ai.tool.call.result":    toolOut,
		})
	})
}

func TestParallelTools(t *testing.T) {
	h := newHarness(t)
	agent := weatherAgent(
		runlettest.ToolCallReply(
			runlettest.Call("a", "get_weather", `{"city":"Rome"}`),
			runlettest.Call("b", "get_weather", `{"city":"Oslo"}`),
			runlettest.Call("", "get_weather", `{"city":"Lima"}`),
			runlettest.Call("", "get_weather", `{"city":42}`),
		),
		runlettest.TextReply("Done."),
	)
	if err := run(context.Background(), h.runtime(), agent, "hi", true); err != nil {
		t.Fatal(err)
	}
	h.assertNoState(t)
	root := h.span(t, "invoke_agent assistant")
	var tools, failed int
	for _, s := range h.spans.GetSpans() {
		if s.Name == "execute_tool get_weather" {
			tools++
			if s.Parent.SpanID() != root.SpanContext.SpanID() || s.EndTime.IsZero() {
				t.Errorf("tool span %v", attrs(s.Attributes))
			}
			if s.Status.Code == codes.Error {
				failed++
			}
		}
	}
	if tools != 4 || failed != 1 {
		t.Errorf("%d tool spans, %d failed; want 4, 1", tools, failed)
	}
}

// TestEvents feeds events by hand, for what the scripted model does not produce.
func TestEvents(t *testing.T) {
	h := newHarness(t, WithRequestModel("default-model"), WithContent(true))
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	hdr := func(seq int64, ms int) runlet.EventHeader {
		return runlet.EventHeader{RunID: "r1", Seq: seq, Time: t0.Add(time.Duration(ms) * time.Millisecond), Agent: "a", Turn: 1}
	}
	temp := 0.2
	req := &runlet.ModelRequest{
		Instructions: "be brief",
		Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.TextPart{Text: "look"},
			runlet.ImagePart{URL: "https://example.com/cat.png", MediaType: "image/png"},
			runlet.FilePart{MediaType: "application/pdf", Data: []byte("%PDF-secret-bytes")},
			runlet.FilePart{MediaType: "audio/wav", URL: "data:audio/wav;base64,AAAA"},
		}}},
		Settings: runlet.Settings{Temperature: &temp, MaxOutputTokens: 100, StopSequences: []string{"END"}},
	}
	resp := &runlet.ModelResponse{
		Message: runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "thinking", Signature: "SIG-opaque"},
			runlet.ToolCallPart{ID: "c1", Name: "t", Arguments: []byte(`{bad`)},
		}},
		Usage:        runlet.Usage{InputTokens: 7, OutputTokens: 3, CachedInputTokens: 4, ReasoningTokens: 2},
		FinishReason: runlet.FinishToolCalls,
		ID:           "resp_1",
		Model:        "default-model-2025",
	}
	ctx := context.Background()
	for _, ev := range []runlet.Event{
		&runlet.RunStarted{EventHeader: hdr(1, 0)},
		&runlet.ContextPrepared{EventHeader: hdr(2, 1), Changed: true, MessagesBefore: 9, MessagesAfter: 3, Notes: []string{"dropped 3 oldest turns"}},
		&runlet.ModelStarted{EventHeader: hdr(3, 2), Request: req},
		&runlet.ReasoningDelta{EventHeader: hdr(4, 250), Delta: "thi"},
		&runlet.TextDelta{EventHeader: hdr(5, 300), Delta: "x"},
		&runlet.ModelFinished{EventHeader: hdr(6, 1002), Response: resp},
		&runlet.ToolFinished{EventHeader: hdr(7, 1003), Call: runlet.ToolCallPart{ID: "unknown"}}, // ignored
		&runlet.RunFinished{EventHeader: hdr(8, 1004), Result: &runlet.Result{Status: runlet.StateFinished}},
		&runlet.TextDelta{EventHeader: hdr(9, 1005)}, // after the end: ignored
	} {
		h.obs.Observe(ctx, ev)
	}
	h.assertNoState(t)
	chat := h.span(t, "chat default-model")
	if !chat.StartTime.Equal(t0.Add(2*time.Millisecond)) || !chat.EndTime.Equal(t0.Add(1002*time.Millisecond)) {
		t.Errorf("chat span times %v .. %v", chat.StartTime, chat.EndTime)
	}
	wantAttrs(t, chat, map[string]string{
		"gen_ai.request.model":                 "default-model",
		"gen_ai.request.temperature":           "0.2",
		"gen_ai.request.max_tokens":            "100",
		"gen_ai.request.stop_sequences":        `["END"]`,
		"gen_ai.response.id":                   "resp_1",
		"gen_ai.response.model":                "default-model-2025",
		"gen_ai.usage.cache_read.input_tokens": "4",
		"gen_ai.usage.reasoning.output_tokens": "2",
		"gen_ai.response.time_to_first_chunk":  "0.248",
	})
	details := attrs(chat.Events[0].Attributes)
	if want := `[{"role":"user","parts":[{"type":"text","content":"look"},{"type":"uri","modality":"image","mime_type":"image/png","uri":"https://example.com/cat.png"},{"type":"blob","modality":"document","mime_type":"application/pdf"},{"type":"blob","modality":"audio","mime_type":"audio/wav"}]}]`; details["gen_ai.input.messages"] != want {
		t.Errorf("input messages\n got %s\nwant %s", details["gen_ai.input.messages"], want)
	}
	if want := `[{"role":"assistant","parts":[{"type":"reasoning","content":"thinking"},{"type":"tool_call","id":"c1","name":"t","arguments":"{bad"}],"finish_reason":"tool_calls"}]`; details["gen_ai.output.messages"] != want {
		t.Errorf("output messages\n got %s\nwant %s", details["gen_ai.output.messages"], want)
	}
	root := h.span(t, "invoke_agent a")
	if len(root.Events) != 1 || root.Events[0].Name != "runlet.context.prepared" {
		t.Errorf("run span events %+v", root.Events)
	}
	// Duration falls back to the header times when the event has none.
	dur := h.metrics(t)["gen_ai.client.operation.duration"].(metricdata.Histogram[float64])
	for _, dp := range dur.DataPoints {
		if op, _ := dp.Attributes.Value("gen_ai.operation.name"); op.AsString() == "chat" && dp.Sum != 1.0 {
			t.Errorf("chat duration %v s", dp.Sum)
		}
	}
}
