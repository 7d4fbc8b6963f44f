package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Behaviour against the fake Responses server of runlettest (loopback).

func respFakeModel(srv *runlettest.OpenAIResponsesServer, retries int) *Responses {
	return NewResponses(Config{BaseURL: srv.BaseURL(), APIKey: "sk-test-secret-key", Model: "gpt-5", MaxRetries: retries})
}

func respFakeServer(t *testing.T, turns ...runlettest.ResponsesTurn) *runlettest.OpenAIResponsesServer {
	t.Helper()
	srv := runlettest.NewOpenAIResponsesServer(turns...)
	t.Cleanup(func() {
		srv.Close()
		// Every request the adapter sent in the test is a valid CreateResponse.
		for _, r := range srv.Requests() {
			respValidate(t, r.Body)
		}
	})
	return srv
}

var respReq = &runlet.ModelRequest{
	Messages: []runlet.Message{runlet.UserText("Weather in Paris?")},
	Options:  map[string]any{"reasoning": map[string]any{"effort": "low", "summary": "auto"}},
}

func respMixedTurn() runlettest.ResponsesTurn {
	return runlettest.ResponsesTurn{
		Items: []runlettest.ResponsesItem{
			runlettest.ResponsesReasoning("enc-1", "**Plan**\n\nLook it up.", "**Then** answer."),
			runlettest.ResponsesText("Let me check the weather — un moment."),
			runlettest.ResponsesFunctionCall("get_weather", `{"city":"Paris","unit":"celsius"}`),
			runlettest.ResponsesFunctionCall("get_time", `{}`),
		},
		Usage: runlettest.ResponsesUsage{InputTokens: 50, OutputTokens: 40, ReasoningTokens: 12, CachedTokens: 8},
	}
}

func TestResponsesFakeServerGenerateAndStream(t *testing.T) {
	want := respWantResponse{
		id: "resp_1", model: "gpt-5", finish: runlet.FinishToolCalls,
		usage: runlet.Usage{InputTokens: 50, OutputTokens: 40, TotalTokens: 90, ReasoningTokens: 12, CachedInputTokens: 8},
		parts: []respWantPart{
			{kind: "reasoning", text: "**Plan**\n\nLook it up.\n\n**Then** answer.", id: "rs_1_0", encLen: 5, encPrefix: "enc-1"},
			{kind: "text", text: "Let me check the weather — un moment."},
			{kind: "call", callID: "call_1_2", name: "get_weather", args: `{"city":"Paris","unit":"celsius"}`, itemID: "fc_1_2"},
			{kind: "call", callID: "call_1_3", name: "get_time", args: `{}`, itemID: "fc_1_3"},
		},
	}
	srv := respFakeServer(t, respMixedTurn())
	got, err := respFakeModel(srv, 0).Generate(context.Background(), respReq)
	if err != nil {
		t.Fatal(err)
	}
	respCheckResponse(t, got, want)

	for _, chunk := range []int{0, 1, 3, 1000} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			srv := respFakeServer(t, respMixedTurn())
			srv.ChunkSize = chunk
			c, err := respDrain(t, respFakeModel(srv, 0).Stream(context.Background(), respReq))
			if err != nil {
				t.Fatal(err)
			}
			respCheckResponse(t, c.done, want)
			respCheckDeltas(t, c)
			if chunk == 1 && c.textEvents != len([]rune("Let me check the weather — un moment.")) {
				t.Errorf("text events = %d", c.textEvents)
			}
			req := srv.Requests()[0].JSON()
			if req["stream"] != true || req["store"] != false || respJSON(req["include"]) != `["reasoning.encrypted_content"]` {
				t.Errorf("request = %v", req)
			}
		})
	}
}

func TestResponsesFinishReasons(t *testing.T) {
	tests := []struct {
		turn runlettest.ResponsesTurn
		want runlet.FinishReason
		text string
	}{
		{runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Hello.")}}, runlet.FinishStop, "Hello."},
		{runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Once upon a")}, Incomplete: "max_output_tokens"}, runlet.FinishLength, "Once upon a"},
		{runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("")}, Incomplete: "content_filter"}, runlet.FinishContentFilter, ""},
		{runlettest.ResponsesTurn{Incomplete: "something_new"}, runlet.FinishOther, ""},
		{runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesRefusal("I can't help with that.")}}, runlet.FinishRefusal, "I can't help with that."},
		// Function-call arguments cut off by the limit: length wins.
		{runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesFunctionCall("f", `{"a":`)}, Incomplete: "max_output_tokens"}, runlet.FinishLength, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			srv := respFakeServer(t, tt.turn, tt.turn)
			srv.ChunkSize = 4
			m := respFakeModel(srv, 0)
			got, err := m.Generate(context.Background(), respReq)
			if err != nil {
				t.Fatal(err)
			}
			c, err := respDrain(t, m.Stream(context.Background(), respReq))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []*runlet.ModelResponse{got, c.done} {
				if r.FinishReason != tt.want || r.Message.Text() != tt.text {
					t.Errorf("finish %q text %q, want %q %q", r.FinishReason, r.Message.Text(), tt.want, tt.text)
				}
			}
			if c.text != tt.text {
				t.Errorf("streamed text %q", c.text)
			}
		})
	}
}

func TestResponsesFailedResponse(t *testing.T) {
	turn := runlettest.ResponsesTurn{
		Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Partial")},
		Fail:  &runlettest.ResponsesError{Code: "server_error", Message: "The model failed to generate a response."},
	}
	srv := respFakeServer(t, turn, turn)
	m := respFakeModel(srv, -1) // a failed response is retryable; see TestResponsesGenerateRetriesBody
	_, genErr := m.Generate(context.Background(), respReq)
	c, streamErr := respDrain(t, m.Stream(context.Background(), respReq))
	for _, err := range []error{genErr, streamErr} {
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || pe.Code != "server_error" || pe.Message != "The model failed to generate a response." || !pe.Retryable || pe.Provider != "openai" {
			t.Errorf("err = %#v", err)
		}
	}
	// Deltas before the failure reached the caller; no StreamDone did.
	if c.text != "Partial" || c.done != nil {
		t.Errorf("streamed %q, done %v", c.text, c.done)
	}
}

// A non-streamed body that fails in a way a retry may cure is retried: a
// 200 holding an error envelope, a failed response with a retryable code.
func TestResponsesGenerateRetriesBody(t *testing.T) {
	for _, first := range []runlettest.ResponsesTurn{
		{Fail: &runlettest.ResponsesError{Code: "server_error", Message: "The model failed to generate a response."}},
		{Error: &runlettest.WireError{Status: 200, Type: "server_error", Message: "overloaded"}},
	} {
		srv := respFakeServer(t, first, runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Hello there, friend.")}})
		m := respFakeModel(srv, 0)
		m.r.client.MinBackoff, m.r.client.MaxBackoff = time.Millisecond, time.Millisecond
		got, err := m.Generate(context.Background(), respReq)
		if err != nil || got.Message.Text() != "Hello there, friend." || len(srv.Requests()) != 2 {
			t.Errorf("%+v: got %v, err %v, %d requests", first, got, err, len(srv.Requests()))
		}
	}
}

// Each Fault of the shared fake-server plumbing, as the adapter sees it.
func TestResponsesFaults(t *testing.T) {
	textTurn := runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Hello there, friend.")}}
	fastRetry := http.Header{"Retry-After-Ms": {"1"}}
	tests := []struct {
		name      string
		fault     runlettest.Fault
		retries   int
		stream    bool
		wantOK    bool
		requests  int
		status    int
		retryable bool
		sentinel  error
	}{
		{"500 retried", runlettest.Fault{Status: 500, Header: fastRetry, Body: `{"error":{"message":"boom","type":"server_error"}}`}, 0, true, true, 2, 0, false, nil},
		{"429 retried (generate)", runlettest.Fault{Status: 429, Header: fastRetry, Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`}, 0, false, true, 2, 0, false, nil},
		{"503 not retried when disabled", runlettest.Fault{Status: 503, Body: "<html><body><h1>503 Service Unavailable</h1></body></html>"}, -1, true, false, 1, 503, true, nil},
		{"400 never retried", runlettest.Fault{Status: 400, Header: fastRetry, Body: `{"error":{"message":"bad","type":"invalid_request_error","code":"x"}}`}, 0, true, false, 1, 400, false, nil},
		// A stream that fails before its first delta reached the caller is
		// retried; after a delta it is not.
		{"reset before the first delta", runlettest.Fault{Reset: true, AfterEvents: 4}, 0, true, true, 2, 0, false, nil},
		{"reset before the first event", runlettest.Fault{Reset: true}, 0, true, true, 2, 0, false, nil},
		{"reset after a delta", runlettest.Fault{Reset: true, AfterEvents: 6}, 0, true, false, 1, 0, true, runlet.ErrStreamIncomplete},
		{"reset before the first event, no retries", runlettest.Fault{Reset: true}, -1, true, false, 1, 0, true, runlet.ErrStreamIncomplete},
		{"truncated stream", runlettest.Fault{Truncate: true, AfterEvents: 6}, 0, true, false, 1, 0, true, runlet.ErrStreamIncomplete},
		// A body cut off halfway is retried like a failed request.
		{"truncated body retried", runlettest.Fault{Truncate: true}, 0, false, true, 2, 0, false, nil},
		{"truncated body, no retries", runlettest.Fault{Truncate: true}, -1, false, false, 1, 200, true, runlet.ErrStreamIncomplete},
		{"reset before the body, no retries", runlettest.Fault{Reset: true}, -1, false, false, 1, 0, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := respFakeServer(t, textTurn, textTurn)
			srv.ChunkSize = 3
			srv.InjectFault(tt.fault)
			m := respFakeModel(srv, tt.retries)
			var resp *runlet.ModelResponse
			var err error
			if tt.stream {
				var c *respCollected
				c, err = respDrain(t, m.Stream(context.Background(), respReq))
				if err == nil {
					resp = c.done
				}
			} else {
				resp, err = m.Generate(context.Background(), respReq)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if tt.wantOK {
				if err != nil || resp.Message.Text() != "Hello there, friend." {
					t.Fatalf("resp %v, err %v", resp, err)
				}
				return
			}
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ProviderError", err)
			}
			if pe.StatusCode != tt.status || pe.Retryable != tt.retryable || pe.Provider != "openai" {
				t.Errorf("err = %#v", pe)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("err = %v, want %v", err, tt.sentinel)
			}
			if strings.Contains(fmt.Sprintf("%v %+v", err, pe), "sk-test-secret-key") {
				t.Errorf("API key in error: %v", err)
			}
		})
	}
}

// respStreamServer serves a hand-written event stream.
func respStreamServer(t *testing.T, events ...string) *Responses {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	srv, _ := respServe(t, 200, "text/event-stream", []byte(b.String()))
	return respModel(srv.URL)
}

const (
	respEvAdded     = `data: {"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}`
	respEvDelta     = `data: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hi"}`
	respEvDone      = `data: {"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi!"}]}}`
	respEvCompleted = `data: {"type":"response.completed","response":{"id":"resp_1","model":"m","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi!"}]}],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}}`
)

func TestResponsesStreamEdgeCases(t *testing.T) {
	t.Run("unknown events are skipped", func(t *testing.T) {
		m := respStreamServer(t,
			`: keep-alive`,
			`event: response.created`+"\n"+`data: {"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`,
			respEvAdded,
			`data: {"type":"response.future_thing.delta","output_index":0,"delta":{"nested":[1,2]},"item":"not an object"}`,
			`data: {"type":"response.output_text.annotation.added","output_index":0,"annotation":{"type":"url_citation"}}`,
			respEvDelta, respEvDone, respEvCompleted)
		c, err := respDrain(t, m.Stream(context.Background(), &runlet.ModelRequest{}))
		if err != nil || c.text != "Hi!" || c.done.Message.Text() != "Hi!" || c.done.Usage.TotalTokens != 5 {
			t.Fatalf("text %q err %v", c.text, err)
		}
	})
	t.Run("done without deltas emits the text once", func(t *testing.T) {
		m := respStreamServer(t, respEvAdded, respEvDone, respEvCompleted)
		c, err := respDrain(t, m.Stream(context.Background(), &runlet.ModelRequest{}))
		if err != nil || c.text != "Hi!" || c.textEvents != 1 {
			t.Fatalf("text %q (%d events) err %v", c.text, c.textEvents, err)
		}
	})
	t.Run("only a completed event", func(t *testing.T) {
		m := respStreamServer(t, respEvCompleted)
		c, err := respDrain(t, m.Stream(context.Background(), &runlet.ModelRequest{}))
		if err != nil || c.text != "Hi!" || c.done.ID != "resp_1" {
			t.Fatalf("text %q err %v", c.text, err)
		}
	})
	t.Run("arguments done is not emitted again", func(t *testing.T) {
		m := respStreamServer(t,
			`data: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":""}}`,
			`data: {"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\":"}`,
			`data: {"type":"response.function_call_arguments.delta","output_index":0,"delta":"1}"}`,
			`data: {"type":"response.function_call_arguments.done","output_index":0,"arguments":"{\"a\":1}"}`,
			`data: {"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}}`,
			`data: {"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}]}}`)
		c, err := respDrain(t, m.Stream(context.Background(), &runlet.ModelRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		call := c.calls[0]
		if call.args != `{"a":1}` || call.events != 3 || call.announced != 1 || c.done.FinishReason != runlet.FinishToolCalls {
			t.Errorf("call %+v, finish %q", call, c.done.FinishReason)
		}
	})
	t.Run("arguments only at done", func(t *testing.T) {
		m := respStreamServer(t,
			`data: {"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}"}}`,
			`data: {"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}`)
		c, err := respDrain(t, m.Stream(context.Background(), &runlet.ModelRequest{}))
		if err != nil || c.calls[0].args != `{"a":1}` || c.calls[0].announced != 1 || c.done.FinishReason != runlet.FinishLength {
			t.Fatalf("calls %+v err %v", c.calls[0], err)
		}
	})

	errCases := []struct {
		name     string
		events   []string
		sentinel error
		code     string
	}{
		{"no terminal event", []string{respEvAdded, respEvDelta}, runlet.ErrStreamIncomplete, ""},
		{"empty body", nil, runlet.ErrStreamIncomplete, ""},
		{"[DONE] before completed", []string{respEvAdded, respEvDelta, `data: [DONE]`}, runlet.ErrStreamIncomplete, ""},
		{"malformed JSON", []string{respEvAdded, `data: {"type":"response.output_text.delta",`}, runlet.ErrMalformedStream, ""},
		{"delta of the wrong type", []string{`data: {"type":"response.output_text.delta","output_index":0,"delta":7}`}, runlet.ErrMalformedStream, ""},
		{"item without item", []string{`data: {"type":"response.output_item.done","output_index":0}`}, runlet.ErrMalformedStream, ""},
		{"error event (documented shape)", []string{respEvAdded, respEvDelta, `data: {"type":"error","code":"rate_limit_exceeded","message":"Slow down.","param":null,"sequence_number":3}`}, nil, "rate_limit_exceeded"},
		{"failed without error", []string{`data: {"type":"response.failed","response":{"id":"r","status":"failed","error":null}}`}, nil, ""},
	}
	for _, tt := range errCases {
		t.Run(tt.name, func(t *testing.T) {
			c, err := respDrain(t, respStreamServer(t, tt.events...).Stream(context.Background(), &runlet.ModelRequest{}))
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) || pe.Code != tt.code || pe.Message == "" {
				t.Fatalf("err = %#v", err)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("err = %v, want %v", err, tt.sentinel)
			}
			if c.done != nil {
				t.Error("StreamDone after an error")
			}
		})
	}
}

// The API key is not in a transport error (the echoing servers are in the
// conformance suite, TestModelContract).
func TestResponsesKeyNeverInErrors(t *testing.T) {
	const key = "sk-test-secret-key"
	// Nor in transport errors.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	m := NewResponses(Config{BaseURL: closed.URL + "/v1", APIKey: key, Model: "m", MaxRetries: -1})
	_, err := m.Generate(context.Background(), respReq)
	if err == nil || strings.Contains(fmt.Sprintf("%v %#v", err, err), key) {
		t.Errorf("err = %v", err)
	}
}

// Turn 1 reasons, then calls a tool; turn 2 sends that reasoning back,
// with its encrypted content, ahead of the call it led to. Asserted on the
// requests the fake server received (which also rejects input the real API
// would refuse).
func TestResponsesMultiTurnReasoningReplay(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := respFakeServer(t,
				runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{
					runlettest.ResponsesReasoning("opaque-state-1", "I should call the weather tool."),
					runlettest.ResponsesFunctionCall("get_weather", `{"city":"Paris"}`),
				}},
				runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{
					runlettest.ResponsesReasoning("opaque-state-2", "Now answer."),
					runlettest.ResponsesText("It is 18°C in Paris."),
				}},
				runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("You're welcome.")}},
			)
			srv.ChunkSize = 5
			m := respFakeModel(srv, 0)
			call := func(req *runlet.ModelRequest) *runlet.ModelResponse {
				t.Helper()
				if !stream {
					resp, err := m.Generate(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					return resp
				}
				c, err := respDrain(t, m.Stream(context.Background(), req))
				if err != nil {
					t.Fatal(err)
				}
				return c.done
			}
			req := &runlet.ModelRequest{
				Instructions: "Use tools.",
				Messages:     []runlet.Message{runlet.UserText("Weather in Paris?")},
				Tools:        []runlet.ToolSpec{respToolSpec(t, "get_weather", "", `{"type":"object","properties":{"city":{"type":"string"}}}`)},
				Options:      map[string]any{"reasoning": map[string]any{"effort": "medium", "summary": "auto"}},
			}
			r1 := call(req)
			calls := r1.Message.ToolCalls()
			if len(calls) != 1 || r1.FinishReason != runlet.FinishToolCalls {
				t.Fatalf("turn 1: %+v", r1)
			}
			req.Messages = append(req.Messages, r1.Message, runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{
				runlet.ToolResultPart{CallID: calls[0].ID, Name: calls[0].Name, Content: "18°C"},
			}})
			r2 := call(req)
			if r2.Message.Text() != "It is 18°C in Paris." {
				t.Fatalf("turn 2: %+v", r2)
			}
			req.Messages = append(req.Messages, r2.Message, runlet.UserText("Thanks!"))
			if r3 := call(req); r3.Message.Text() != "You're welcome." {
				t.Fatalf("turn 3: %+v", r3)
			}

			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			for _, r := range reqs {
				respValidate(t, r.Body)
				if r.Header.Get("Authorization") != "Bearer sk-test-secret-key" {
					t.Errorf("auth header %q", r.Header.Get("Authorization"))
				}
			}
			first := reqs[0].JSON()
			if first["store"] != false || respJSON(first["include"]) != `["reasoning.encrypted_content"]` {
				t.Errorf("turn 1 request: store %v include %v", first["store"], first["include"])
			}
			respWantJSON(t, "turn 2 input", reqs[1].JSON()["input"], `[
				{"type": "message", "role": "user", "content": "Weather in Paris?"},
				{"type": "reasoning", "id": "rs_1_0", "encrypted_content": "opaque-state-1",
				 "summary": [{"type": "summary_text", "text": "I should call the weather tool."}]},
				{"type": "function_call", "id": "fc_1_1", "call_id": "call_1_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
				{"type": "function_call_output", "call_id": "call_1_1", "output": "18°C"}]`)
			// Turn 2's reasoning led to a text answer: both go back as the
			// items they were, so the reasoning item has its following item.
			respWantJSON(t, "turn 3 input", reqs[2].JSON()["input"], `[
				{"type": "message", "role": "user", "content": "Weather in Paris?"},
				{"type": "reasoning", "id": "rs_1_0", "encrypted_content": "opaque-state-1",
				 "summary": [{"type": "summary_text", "text": "I should call the weather tool."}]},
				{"type": "function_call", "id": "fc_1_1", "call_id": "call_1_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
				{"type": "function_call_output", "call_id": "call_1_1", "output": "18°C"},
				{"type": "reasoning", "id": "rs_2_0", "encrypted_content": "opaque-state-2",
				 "summary": [{"type": "summary_text", "text": "Now answer."}]},
				{"type": "message", "role": "assistant", "id": "msg_2_1", "status": "completed",
				 "content": [{"type": "output_text", "text": "It is 18°C in Paris.", "annotations": [], "logprobs": []}]},
				{"type": "message", "role": "user", "content": "Thanks!"}]`)
		})
	}
}

// Reasoning a model of another provider produced is never sent, and the
// fake server shows the request stays valid.
func TestResponsesForeignReasoningDropped(t *testing.T) {
	srv := respFakeServer(t, runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("ok")}})
	_, err := respFakeModel(srv, 0).Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("hi"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "thinking", Signature: "sig-anthropic", Provider: "anthropic"},
			runlet.ReasoningPart{ID: "rs_x", Encrypted: "enc", Provider: "azure"},
			runlet.ToolCallPart{ID: "toolu_1", Name: "f", Arguments: json.RawMessage(`{}`), Provider: "anthropic"},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "toolu_1", Content: "done"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[0].Body)
	for _, leak := range []string{"sig-anthropic", "thinking", "rs_x", `"reasoning"`} {
		if strings.Contains(body, leak) {
			t.Errorf("request carries %s: %s", leak, body)
		}
	}
}

// previous_response_id "auto" chains the tool loop of a run on the server.
func TestResponsesAutoChaining(t *testing.T) {
	srv := respFakeServer(t,
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{
			runlettest.ResponsesReasoning("enc", "Call it."),
			runlettest.ResponsesFunctionCall("get_weather", `{"city":"Paris"}`),
		}},
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("18°C.")}},
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Bye.")}},
	)
	m := respFakeModel(srv, 0)
	req := &runlet.ModelRequest{
		Messages: []runlet.Message{runlet.UserText("Weather?")},
		Options:  map[string]any{"previous_response_id": "auto", "reasoning": map[string]any{"effort": "low"}},
	}
	c, err := respDrain(t, m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	call := c.done.Message.ToolCalls()[0]
	req.Messages = append(req.Messages, c.done.Message, runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: call.ID, Content: "18°C"}}})
	r2, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, r2.Message, runlet.UserText("Bye"))
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	first, second, third := reqs[0].JSON(), reqs[1].JSON(), reqs[2].JSON()
	if first["store"] != true || first["include"] != nil || first["previous_response_id"] != nil {
		t.Errorf("turn 1: %v", first)
	}
	respWantJSON(t, "turn 2", map[string]any{"previous_response_id": second["previous_response_id"], "input": second["input"], "store": second["store"]},
		`{"previous_response_id": "resp_1", "store": true, "input": [{"type": "function_call_output", "call_id": "call_1_1", "output": "18°C"}]}`)
	// After a text-only answer there is nothing to chain from: full history.
	if third["previous_response_id"] != nil || len(third["input"].([]any)) != 6 {
		t.Errorf("turn 3: %v", third)
	}
	for _, r := range reqs {
		respValidate(t, r.Body)
	}
}

// The same replay through the runtime's tool loop, streaming and not.
func TestResponsesRuntimeToolLoopReplaysReasoning(t *testing.T) {
	type weatherArgs struct {
		City string `json:"city"`
	}
	weather := runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in weatherArgs) (string, error) {
		return "18°C in " + in.City, nil
	})
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := respFakeServer(t,
				runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{
					runlettest.ResponsesReasoning("opaque-state-1", "Look up the weather."),
					runlettest.ResponsesFunctionCall("get_weather", `{"city":"Paris"}`),
				}},
				runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("It is 18°C in Paris.")}},
			)
			srv.ChunkSize = 4
			agent := &runlet.Agent{
				Name:         "weather",
				Instructions: "Use the tool.",
				Model:        respFakeModel(srv, 0),
				Tools:        []runlet.Tool{weather},
				Options:      map[string]any{"reasoning": map[string]any{"effort": "low", "summary": "auto"}},
			}
			rt := runlet.NewRuntime()
			var res *runlet.Result
			var err error
			if stream {
				for ev, e := range rt.Stream(context.Background(), agent, "Weather in Paris?") {
					if e != nil {
						err = e
						break
					}
					if f, ok := ev.(*runlet.RunFinished); ok {
						res = f.Result
					}
				}
			} else {
				res, err = rt.Run(context.Background(), agent, "Weather in Paris?")
			}
			if err != nil {
				t.Fatal(err)
			}
			if res == nil || res.Output != "It is 18°C in Paris." || res.Turns != 2 {
				t.Fatalf("result = %+v", res)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for _, r := range reqs {
				respValidate(t, r.Body)
			}
			in := reqs[1].JSON()["input"].([]any)
			respWantJSON(t, "turn 2 input", in[1:3], `[
				{"type": "reasoning", "id": "rs_1_0", "encrypted_content": "opaque-state-1",
				 "summary": [{"type": "summary_text", "text": "Look up the weather."}]},
				{"type": "function_call", "id": "fc_1_1", "call_id": "call_1_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}]`)
			out := in[3].(map[string]any)
			if out["type"] != "function_call_output" || out["call_id"] != "call_1_1" || !strings.Contains(out["output"].(string), "18°C in Paris") {
				t.Errorf("tool output item = %v", out)
			}
		})
	}
}
