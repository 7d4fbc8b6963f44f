package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
	"github.com/runlet/runlet/runlettest"
)

// sseBody builds an event stream from (event name, data) pairs; an empty
// name writes no event: line.
func sseBody(events ...string) []byte {
	var b strings.Builder
	for i := 0; i+1 < len(events); i += 2 {
		if events[i] != "" {
			b.WriteString("event: " + events[i] + "\n")
		}
		b.WriteString("data: " + events[i+1] + "\n\n")
	}
	return []byte(b.String())
}

const (
	evStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	evStop  = `{"type":"message_stop"}`
)

func TestStreamChunking(t *testing.T) {
	const thinking = "Let me think about Paris → weather. 🌦 Done."
	const sig = "EqQBCkYIBxgCKkB+sig/=="
	const input = `{"city":"Paris","days":[1,2,3],"note":"a \"quoted\" word, é"}`
	for _, size := range []int{0, 1, 2, 3, 7, 1000} {
		resp := runlettest.AnthropicResponse{
			Content: []runlettest.AnthropicBlock{
				runlettest.AnthropicThinking(thinking, sig),
				runlettest.AnthropicText("I'll check. "),
				runlettest.AnthropicToolUse("toolu_A", "weather", input),
				runlettest.AnthropicToolUse("toolu_B", "now", ""),
			},
			Usage:     runlettest.AnthropicUsage{InputTokens: 30, OutputTokens: 40, CacheReadInputTokens: 100, CacheCreationInputTokens: 7},
			ChunkSize: size,
		}
		_, m := newServerModel(t, Config{}, resp)
		deltas, got, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		if err != nil {
			t.Fatalf("chunk %d: %v", size, err)
		}
		if r := joined(deltas, runlet.StreamReasoningDelta, 0); r != thinking {
			t.Errorf("chunk %d: reasoning deltas %q", size, r)
		}
		if s := joined(deltas, runlet.StreamTextDelta, 0); s != "I'll check. " {
			t.Errorf("chunk %d: text deltas %q", size, s)
		}
		if s := joined(deltas, runlet.StreamToolCallDelta, 0); s != input {
			t.Errorf("chunk %d: call 0 deltas %q", size, s)
		}
		if s := joined(deltas, runlet.StreamToolCallDelta, 1); s != "" {
			t.Errorf("chunk %d: call 1 deltas %q", size, s)
		}
		seen := map[int]bool{}
		for _, d := range deltas {
			if d.Kind == runlet.StreamToolCallDelta && !seen[d.Index] {
				seen[d.Index] = true
				if want := []string{"toolu_A", "toolu_B"}[d.Index]; d.ID != want || d.Name == "" {
					t.Errorf("first delta of call %d = %+v", d.Index, d)
				}
			}
		}
		want := []runlet.Part{
			runlet.ReasoningPart{Text: thinking, Signature: sig, Provider: "anthropic"},
			runlet.TextPart{Text: "I'll check. "},
			runlet.ToolCallPart{ID: "toolu_A", Name: "weather", Arguments: json.RawMessage(input)},
			runlet.ToolCallPart{ID: "toolu_B", Name: "now", Arguments: json.RawMessage("{}")},
		}
		if !reflect.DeepEqual(got.Message.Parts, want) {
			t.Errorf("chunk %d: parts\n  %#v\nwant\n  %#v", size, got.Message.Parts, want)
		}
		wantUsage := runlet.Usage{InputTokens: 137, OutputTokens: 40, TotalTokens: 177, CachedInputTokens: 100, CacheWriteTokens: 7, Requests: 1}
		if got.Usage != wantUsage || got.FinishReason != runlet.FinishToolCalls || got.ID == "" || got.Model != "claude-test" {
			t.Errorf("chunk %d: usage %+v finish %q id %q model %q", size, got.Usage, got.FinishReason, got.ID, got.Model)
		}
	}
}

// TestGenerateMatchesStream checks both paths assemble the same response.
func TestGenerateMatchesStream(t *testing.T) {
	resp := runlettest.AnthropicResponse{
		ID: "msg_same",
		Content: []runlettest.AnthropicBlock{
			runlettest.AnthropicRedactedThinking("REDACTED=="),
			runlettest.AnthropicThinking("t", "s"),
			runlettest.AnthropicText("a"),
			{Type: "server_tool_use", Raw: json.RawMessage(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}`)},
			{Type: "web_search_tool_result", Raw: json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`)},
			runlettest.AnthropicText("b"),
			runlettest.AnthropicToolUse("toolu_1", "f", `{"x":1}`),
		},
		Usage:     runlettest.AnthropicUsage{InputTokens: 5, OutputTokens: 6},
		ChunkSize: 1,
	}
	_, m := newServerModel(t, Config{}, resp, resp)
	gen, err := m.Generate(ctxTimeout(t), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	_, str, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gen, str) {
		t.Errorf("Generate\n  %#v\nStream\n  %#v", gen, str)
	}
	want := []runlet.Part{
		runlet.ReasoningPart{Encrypted: "REDACTED==", Provider: "anthropic"},
		runlet.ReasoningPart{Text: "t", Signature: "s", Provider: "anthropic"},
		runlet.TextPart{Text: "a"},
		runlet.HostedToolPart{ID: "srvtoolu_1", Kind: runlet.HostedWebSearch, Name: "web_search", Input: json.RawMessage(`{"query":"q"}`),
			Provider: "anthropic", Raw: json.RawMessage(`[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},` +
				`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}]`)},
		runlet.TextPart{Text: "b"},
		runlet.ToolCallPart{ID: "toolu_1", Name: "f", Arguments: json.RawMessage(`{"x":1}`)},
	}
	if !reflect.DeepEqual(gen.Message.Parts, want) {
		t.Errorf("parts %#v", gen.Message.Parts)
	}
}

func TestStopReasons(t *testing.T) {
	for stop, want := range map[string]runlet.FinishReason{
		"end_turn":                      runlet.FinishStop,
		"stop_sequence":                 runlet.FinishStop,
		"tool_use":                      runlet.FinishToolCalls,
		"max_tokens":                    runlet.FinishLength,
		"model_context_window_exceeded": runlet.FinishLength,
		"pause_turn":                    runlet.FinishPause,
		"refusal":                       runlet.FinishRefusal,
		"something_new":                 runlet.FinishOther,
	} {
		r := runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("x")}, StopReason: stop}
		_, m := newServerModel(t, Config{}, r, r)
		gen, err := m.Generate(ctxTimeout(t), userRequest("x"))
		if err != nil || gen.FinishReason != want {
			t.Errorf("Generate %s: %v, %v", stop, gen, err)
		}
		_, str, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		if err != nil || str.FinishReason != want {
			t.Errorf("Stream %s: %v, %v", stop, str, err)
		}
	}
	// A missing stop_reason is derived from the content.
	if finishReason("", true) != runlet.FinishToolCalls || finishReason("", false) != runlet.FinishStop {
		t.Error("empty stop_reason")
	}
}

func TestStreamTolerance(t *testing.T) {
	body := []byte(": comment line\r\n" + string(sseBody(
		"message_start", evStart,
		"", `{"type":"ping"}`, // no event: line
		"future_event", `{"type":"future_event","x":1}`,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"He","citations":[]}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"u"}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"llo"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"future_delta","x":"y"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"orphan"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"orphan"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"mystery_block","payload":{"a":[1,2]}}}`,
		"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"not text"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":1}`,
		"content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_W","name":"whole","input":{"given":"at start"}}}`,
		"content_block_stop", `{"type":"content_block_stop","index":2}`,
		"content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"thinking","thinking":"pre","signature":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"wrong kind"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"signature_delta","signature":"ab"}}`,
		"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"signature_delta","signature":"cd"}}`,
		"content_block_stop", `{"type":"content_block_stop","index":3}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}`,
		"message_stop", evStop,
		"message_start", `{"type":"message_start","message":{"id":"ignored"}}`, // after the end: never read
	)))
	body = []byte(strings.ReplaceAll(string(body), "\n\n", "\r\n\r\n"))
	_, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: body})
	deltas, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
	if err != nil {
		t.Fatal(err)
	}
	want := []runlet.Part{
		runlet.TextPart{Text: "Hello", Citations: []runlet.Citation{{URL: "u", Provider: "anthropic",
			Raw: json.RawMessage(`{"type":"web_search_result_location","url":"u"}`)}}},
		runlet.ToolCallPart{ID: "toolu_W", Name: "whole", Arguments: json.RawMessage(`{"given":"at start"}`)},
		runlet.ReasoningPart{Text: "pre", Signature: "abcd", Provider: "anthropic"},
	}
	if !reflect.DeepEqual(resp.Message.Parts, want) {
		t.Errorf("parts %#v", resp.Message.Parts)
	}
	if resp.ID != "msg_1" || resp.Model != "claude-x" || resp.Usage != usage(10, 9) || resp.FinishReason != runlet.FinishToolCalls {
		t.Errorf("response %+v", resp)
	}
	if s := joined(deltas, runlet.StreamTextDelta, 0); s != "Hello" {
		t.Errorf("text deltas %q", s)
	}
	if s := joined(deltas, runlet.StreamReasoningDelta, 0); s != "pre" {
		t.Errorf("reasoning deltas %q", s)
	}
}

func TestStreamUsage(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}}`
	tests := []struct {
		delta string
		want  runlet.Usage
	}{
		{`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":50}}`,
			runlet.Usage{InputTokens: 115, OutputTokens: 50, TotalTokens: 165, CachedInputTokens: 100, CacheWriteTokens: 5, Requests: 1}},
		{`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":20,"cache_read_input_tokens":0,"output_tokens":50}}`,
			runlet.Usage{InputTokens: 25, OutputTokens: 50, TotalTokens: 75, CacheWriteTokens: 5, Requests: 1}},
		{`{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`,
			runlet.Usage{InputTokens: 115, OutputTokens: 1, TotalTokens: 116, CachedInputTokens: 100, CacheWriteTokens: 5, Requests: 1}},
	}
	for _, tt := range tests {
		_, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: sseBody("message_start", start, "message_delta", tt.delta, "message_stop", evStop)})
		_, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage != tt.want {
			t.Errorf("%s: usage %+v, want %+v", tt.delta, resp.Usage, tt.want)
		}
		if len(resp.Message.Parts) != 0 || resp.FinishReason != runlet.FinishStop {
			t.Errorf("empty response %+v", resp)
		}
	}
}

func TestStreamEnds(t *testing.T) {
	delta := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`
	blockStart := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	tests := []struct {
		name       string
		body       []byte
		incomplete bool
		deltas     int
		requests   int // with MaxRetries 1
	}{
		{"empty body", []byte{}, true, 0, 2},
		{"no message_stop", sseBody("message_start", evStart, "content_block_start", blockStart, "content_block_delta", delta), true, 1, 1},
		{"stops before deltas", sseBody("message_start", evStart, "content_block_start", blockStart), true, 0, 2},
		{"last event without blank line", []byte(strings.TrimSuffix(string(sseBody("message_start", evStart, "message_stop", evStop)), "\n\n")), false, 0, 1},
		{"cut mid-event", []byte(string(sseBody("message_start", evStart, "content_block_start", blockStart, "content_block_delta", delta)) + "event: content_block_delta\ndata: {\"type\":\"content_blo"), true, 1, 1},
		{"cut mid-event before deltas", []byte(string(sseBody("message_start", evStart)) + "data: {\"type\":\"content_blo"), true, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, m := newServerModel(t, Config{MaxRetries: 1}, runlettest.AnthropicResponse{Body: tt.body}, runlettest.AnthropicResponse{Body: tt.body})
			deltas, _, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
			if len(deltas) != tt.deltas {
				t.Errorf("%d deltas, want %d", len(deltas), tt.deltas)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if !tt.incomplete {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			perr := requireProviderError(t, err)
			if !errors.Is(err, runlet.ErrStreamIncomplete) || !perr.Retryable || perr.StatusCode != 0 {
				t.Errorf("err = %#v", perr)
			}
		})
	}
}

func TestStreamErrorEvents(t *testing.T) {
	text := sseBody("message_start", evStart,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}`)
	tests := []struct {
		name, event, typ, message, requestID string
		retryable                            bool
	}{
		{"overloaded", `{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"},"request_id":"req_9"}`,
			"overloaded_error", "Overloaded", "req_9", true},
		{"api error", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, "api_error", "Internal server error", "", true},
		{"invalid request", `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, "invalid_request_error", "bad", "", false},
		{"unparsable", `Overloaded!`, "", "Overloaded!", "", false},
		{"empty error", `{"type":"error"}`, "", `{"type":"error"}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := append(append([]byte{}, text...), sseBody("error", tt.event)...)
			srv, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: body})
			deltas, _, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
			if len(deltas) != 1 || deltas[0].Delta != "partial" {
				t.Errorf("deltas %+v", deltas)
			}
			perr := requireProviderError(t, err)
			if perr.Type != tt.typ || perr.Message != tt.message || perr.RequestID != tt.requestID || perr.Retryable != tt.retryable || perr.StatusCode != 0 {
				t.Errorf("err = %#v", *perr)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("retried after a delta was yielded")
			}
		})
	}
}

func TestStreamMalformed(t *testing.T) {
	// A broken event followed by more: malformed, not retried. (A broken
	// last event is a cut-off stream: see TestStreamEnds.)
	for name, body := range map[string][]byte{
		"not json":       sseBody("message_start", evStart, "content_block_delta", `{"type":"content_block_delta",`, "message_stop", evStop),
		"wrong types":    sseBody("message_start", `{"type":"message_start","message":{"id":5}}`, "message_stop", evStop),
		"huge index":     sseBody("content_block_start", `{"type":"content_block_start","index":100000000,"content_block":{"type":"text"}}`, "message_stop", evStop),
		"negative index": sseBody("content_block_start", `{"type":"content_block_start","index":-3,"content_block":{"type":"text"}}`, "message_stop", evStop),
	} {
		t.Run(name, func(t *testing.T) {
			srv, m := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: body})
			_, _, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
			perr := requireProviderError(t, err)
			if perr.Retryable || errors.Is(err, runlet.ErrStreamIncomplete) || !errors.Is(err, runlet.ErrMalformedStream) {
				t.Errorf("err = %#v", *perr)
			}
			if len(srv.Requests()) != 1 {
				t.Error("a malformed stream was retried")
			}
		})
	}
}

// TestStreamJSONAnswer covers a gateway that ignores "stream": true and
// answers with a whole message (or a JSON error) instead of events.
func TestStreamJSONAnswer(t *testing.T) {
	body := readFixture(t, "pydantic-nonstream-thinking-tool-use.response.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.Header.Get("X-Fail") != "" {
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	m := newTestModel(srv.URL, Config{})
	deltas, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
	if err != nil {
		t.Fatal(err)
	}
	want := nonStreamingCases()["pydantic-nonstream-thinking-tool-use.response.json"]
	want.verify(t, resp)
	if len(deltas) != 3 || deltas[0].Kind != runlet.StreamReasoningDelta || deltas[1].Kind != runlet.StreamTextDelta ||
		deltas[2].Kind != runlet.StreamToolCallDelta || deltas[2].ID != "toolu_01YGzqpRE16Vricda3Aqcejo" || deltas[2].Delta != "{}" {
		t.Errorf("deltas %+v", deltas)
	}

	m = newTestModel(srv.URL, Config{MaxRetries: -1, Headers: http.Header{"X-Fail": {"1"}}})
	_, _, err = collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
	if perr := requireProviderError(t, err); perr.Type != "overloaded_error" || perr.StatusCode != 200 {
		t.Errorf("err = %#v", *perr)
	}
}

func TestConcurrentStreams(t *testing.T) {
	srv := runlettest.NewAnthropicServer()
	defer srv.Close()
	srv.SetResponder(func(r runlettest.WireRequest) runlettest.AnthropicResponse {
		var body struct {
			Messages []struct{ Content []struct{ Text string } }
		}
		_ = json.Unmarshal(r.Body, &body)
		return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("echo " + body.Messages[0].Content[0].Text)}, ChunkSize: 2}
	})
	m := newTestModel(srv.URL, Config{})
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			req := userRequest(strings.Repeat("x", i+1))
			req.Options = map[string]any{"betas": []string{"b" + strings.Repeat("x", i+1)}}
			resp, err := modelkit.Collect(m.Stream(context.Background(), req))
			if err == nil && resp.Message.Text() != "echo "+strings.Repeat("x", i+1) {
				err = errors.New("wrong answer " + resp.Message.Text())
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, r := range srv.Requests() {
		n := len(r.JSON()["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string))
		if got := r.Header.Get("Anthropic-Beta"); got != "b"+strings.Repeat("x", n) {
			t.Errorf("request %d carried betas %q", n, got)
		}
	}
}

func TestNilRequest(t *testing.T) {
	m := newTestModel("http://127.0.0.1:1", Config{})
	_, err := m.Generate(context.Background(), nil)
	requireProviderError(t, err)
	_, _, err = collect(t, m.Stream(context.Background(), nil))
	requireProviderError(t, err)
}

// TestGenerateEventStreamAnswer covers the reverse: an event stream sent in
// answer to a non-streaming request.
func TestGenerateEventStreamAnswer(t *testing.T) {
	name := "anthropicpy-stream-text-then-tool-use.response.sse"
	body := readFixture(t, name)
	truncated := body[:len(body)/2]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Header.Get("X-Truncate") != "" {
			_, _ = w.Write(truncated)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	resp, err := newTestModel(srv.URL, Config{}).Generate(ctxTimeout(t), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	streamingCases()[name].verify(t, resp)

	_, err = newTestModel(srv.URL, Config{MaxRetries: -1, Headers: http.Header{"X-Truncate": {"1"}}}).Generate(ctxTimeout(t), userRequest("x"))
	if requireProviderError(t, err); !errors.Is(err, runlet.ErrStreamIncomplete) {
		t.Errorf("err = %v", err)
	}
}
