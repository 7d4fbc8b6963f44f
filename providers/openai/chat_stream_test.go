package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// collect drains a stream: deltas, final response, error.
func collect(seq func(func(runlet.StreamEvent, error) bool)) ([]runlet.StreamEvent, *runlet.ModelResponse, error) {
	var events []runlet.StreamEvent
	for ev, err := range seq {
		if err != nil {
			return events, nil, err
		}
		if ev.Kind == runlet.StreamDone {
			return events, ev.Response, nil
		}
		events = append(events, ev)
	}
	return events, nil, errors.New("stream ended without StreamDone or error")
}

func userReq(text string) *runlet.ModelRequest {
	return &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText(text)}}
}

// Text, reasoning and parallel tool calls stream through the fake server in
// every chunking, including cuts inside UTF-8 sequences and inside UTF-16
// surrogate pairs, interleaved or not; deltas and the final response agree.
func TestChatStreamSplits(t *testing.T) {
	reply := runlettest.OpenAIChatReply{
		Reasoning: "Thinking about 天气 and 😀…",
		Text:      "Héllo wörld 👋🏽 — 東京 is sunny ☀️.",
		ToolCalls: []runlettest.OpenAIChatToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city":"東京","note":"😀 ok"}`},
			{ID: "call_b", Name: "get_time", Arguments: `{"tz":"Asia/Tokyo"}`},
			{ID: "call_c", Name: "noargs", Arguments: ``},
		},
		Usage: &runlettest.OpenAIChatUsage{PromptTokens: 11, CompletionTokens: 22, ReasoningTokens: 5, CachedTokens: 3},
	}
	for _, split := range []runlettest.ChatSplit{runlettest.ChatSplitRunes, runlettest.ChatSplitBytes, runlettest.ChatSplitUTF16} {
		for _, size := range []int{1, 2, 3, 5, 100} {
			for _, interleave := range []bool{false, true} {
				name := fmt.Sprintf("split%d/size%d/interleave=%v", split, size, interleave)
				t.Run(name, func(t *testing.T) {
					srv, m := chatTestServer(t, Config{Name: "vllm"}, reply)
					srv.Split, srv.ChunkSize, srv.InterleaveToolCalls = split, size, interleave
					events, resp, err := collect(m.Stream(context.Background(), userReq("hi")))
					if err != nil {
						t.Fatal(err)
					}
					if got := resp.Message.Reasoning(); got != reply.Reasoning {
						t.Errorf("reasoning = %q", got)
					}
					if got := resp.Message.Text(); got != reply.Text {
						t.Errorf("text = %q", got)
					}
					calls := resp.Message.ToolCalls()
					if len(calls) != 3 {
						t.Fatalf("calls = %+v", calls)
					}
					for i, c := range calls {
						want := reply.ToolCalls[i]
						args := want.Arguments
						if args == "" {
							args = "{}"
						}
						if c.ID != want.ID || c.Name != want.Name || string(c.Arguments) != args {
							t.Errorf("call %d = %+v", i, c)
						}
					}
					// Every delta joined per target is valid UTF-8 and equals the result.
					var text, reasoning string
					args := map[int]string{}
					for _, ev := range events {
						switch ev.Kind {
						case runlet.StreamTextDelta:
							text += ev.Delta
						case runlet.StreamReasoningDelta:
							reasoning += ev.Delta
						case runlet.StreamToolCallDelta:
							args[ev.Index] += ev.Delta
						}
					}
					if text != reply.Text || reasoning != reply.Reasoning || args[0] != reply.ToolCalls[0].Arguments || args[1] != reply.ToolCalls[1].Arguments {
						t.Errorf("deltas: text %q reasoning %q args %v", text, reasoning, args)
					}
					for _, s := range []string{text, reasoning, args[0], args[1]} {
						if !utf8.ValidString(s) {
							t.Errorf("joined deltas are not valid UTF-8: %q", s)
						}
					}
					wantUsage := runlet.Usage{InputTokens: 11, OutputTokens: 22, TotalTokens: 33, ReasoningTokens: 5, CachedInputTokens: 3}
					if resp.Usage != wantUsage || resp.FinishReason != runlet.FinishToolCalls {
						t.Errorf("usage %+v finish %s", resp.Usage, resp.FinishReason)
					}
					if r := resp.Message.Parts[0].(runlet.ReasoningPart); r.Provider != "vllm" {
						t.Errorf("reasoning provider = %q", r.Provider)
					}
					if !strings.HasPrefix(resp.ID, "chatcmpl-runlettest-") || resp.Model != "gpt-4o-mini" {
						t.Errorf("id %q model %q", resp.ID, resp.Model)
					}
				})
			}
		}
	}
}

// The same replies come back from Generate.
func TestChatGenerate(t *testing.T) {
	reply := runlettest.OpenAIChatReply{
		Reasoning:      "hmm",
		ReasoningField: "reasoning",
		Text:           "Héllo 👋",
		ToolCalls:      []runlettest.OpenAIChatToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}},
	}
	_, m := chatTestServer(t, Config{Name: "ollama"}, reply, runlettest.OpenAIChatReply{Refusal: "I can't help with that."})
	resp, err := m.Generate(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.ReasoningPart{Text: "hmm", Provider: "ollama"},
		runlet.TextPart{Text: "Héllo 👋"},
		runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)},
	}}
	gotJSON, _ := json.Marshal(resp.Message)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) || resp.FinishReason != runlet.FinishToolCalls {
		t.Errorf("message = %s finish %s\nwant %s", gotJSON, resp.FinishReason, wantJSON)
	}
	resp, err = m.Generate(context.Background(), userReq("bad"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "I can't help with that." || resp.FinishReason != runlet.FinishRefusal {
		t.Errorf("refusal: %q %s", resp.Message.Text(), resp.FinishReason)
	}
}

func TestChatStreamRefusal(t *testing.T) {
	_, m := chatTestServer(t, Config{}, runlettest.OpenAIChatReply{Refusal: "I can't help with that."})
	events, resp, err := collect(m.Stream(context.Background(), userReq("bad")))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "I can't help with that." || resp.FinishReason != runlet.FinishRefusal || len(events) == 0 {
		t.Errorf("refusal: %q %s %d events", resp.Message.Text(), resp.FinishReason, len(events))
	}
}

// chatSSE frames payloads as data events.
func chatSSE(payloads ...string) []byte {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: ")
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	return []byte(b.String())
}

const (
	chunkRole   = `{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`
	chunkHello  = `{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hello"}}]}`
	chunkFinish = `{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	chunkUsage  = `{"id":"c1","model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`
)

// Decoder edge cases, fed as raw event-stream bytes.
func TestChatDecoderCases(t *testing.T) {
	tests := []struct {
		name     string
		body     []byte
		thinking bool
		text     string
		reason   string
		calls    string // "id name args; ..."
		finish   runlet.FinishReason
		err      error // errors.Is target; nil means success
		errText  string
	}{
		{name: "complete", body: chatSSE(chunkRole, chunkHello, chunkFinish, chunkUsage, "[DONE]"), text: "Hello", finish: runlet.FinishStop},
		{name: "no usage requested, with DONE", body: chatSSE(chunkHello, chunkFinish, "[DONE]"), text: "Hello", finish: runlet.FinishStop},
		{name: "no DONE but finish and usage", body: chatSSE(chunkHello, chunkFinish, chunkUsage), text: "Hello", finish: runlet.FinishStop},
		{name: "data after DONE ignored", body: chatSSE(chunkHello, chunkFinish, "[DONE]", "garbage"), text: "Hello", finish: runlet.FinishStop},
		{name: "cut before finish", body: chatSSE(chunkRole, chunkHello), err: runlet.ErrStreamIncomplete, errText: "before a finish_reason"},
		{name: "cut after finish, before usage and DONE", body: chatSSE(chunkHello, chunkFinish), err: runlet.ErrStreamIncomplete, errText: "before [DONE]"},
		{name: "DONE without finish", body: chatSSE(chunkHello, "[DONE]"), err: runlet.ErrStreamIncomplete, errText: "no finish_reason"},
		{name: "usage and DONE without finish", body: chatSSE(chunkHello, chunkUsage, "[DONE]"), text: "Hello", finish: runlet.FinishStop},
		{name: "usage without finish or DONE", body: chatSSE(chunkHello, chunkUsage), err: runlet.ErrStreamIncomplete},
		{name: "tool call, usage and DONE without finish",
			body:  chatSSE(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{}"}}]}}]}`, chunkUsage, "[DONE]"),
			calls: "t1 f {}", finish: runlet.FinishToolCalls},
		{name: "empty body", body: nil, err: runlet.ErrStreamIncomplete},
		{name: "cut mid-event", body: []byte("data: " + chunkHello + "\n\ndata: {\"id\":\"c1\",\"choi"), err: runlet.ErrMalformedStream},
		{name: "malformed chunk", body: chatSSE(chunkHello, `{"choices":[{"index":0,"delta":{"content":"x"}}]`), err: runlet.ErrMalformedStream},
		{name: "not JSON", body: chatSSE("hello"), err: runlet.ErrMalformedStream},
		{name: "two values in one chunk", body: chatSSE(chunkHello+chunkHello, chunkFinish, "[DONE]"), err: runlet.ErrMalformedStream},
		{name: "trailing garbage", body: chatSSE(chunkHello+" x", chunkFinish, "[DONE]"), err: runlet.ErrMalformedStream},
		{name: "a scalar chunk", body: chatSSE(chunkHello, "42", chunkFinish, "[DONE]"), err: runlet.ErrMalformedStream},
		{name: "trailing whitespace", body: chatSSE(chunkHello+" \t ", " "+chunkHello+"  ", chunkFinish, "[DONE]"), text: "HelloHello", finish: runlet.FinishStop},
		{name: "multi-line data", body: []byte("data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"Hi\"}}]}\n\n" + string(chatSSE(chunkFinish, "[DONE]"))), text: "Hi", finish: runlet.FinishStop},
		{name: "wrong types", body: chatSSE(`{"choices":[{"index":"zero"}]}`), err: runlet.ErrMalformedStream},
		{name: "bad tool call index", body: chatSSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1.5}]}}]}`), err: runlet.ErrMalformedStream},
		{name: "comments, CRLF, keep-alives, empty data",
			body: []byte(": keep-alive\r\n\r\ndata:\r\n\r\ndata: " + chunkHello + "\r\n\r\n: ping\r\ndata: " + chunkFinish + "\r\n\r\ndata: [DONE]\r\n"),
			text: "Hello", finish: runlet.FinishStop},
		{name: "other choices ignored",
			body: chatSSE(`{"id":"c","model":"m","choices":[{"index":1,"delta":{"content":"B"}},{"index":0,"delta":{"content":"A"}}]}`,
				`{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"},{"index":1,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f"}}]}}]}`, "[DONE]"),
			text: "A", finish: runlet.FinishStop},
		{name: "tool calls without index (new ID starts a new call)",
			body: chatSSE(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			calls: `a f {"x":1}; b g {}`, finish: runlet.FinishToolCalls},
		{name: "whole calls in one chunk, names repeated on every delta",
			body: chatSSE(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"g","arguments":"{\"y\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":":2}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			calls: `a f {}; b g {"y":2}`, finish: runlet.FinishToolCalls},
		{name: "missing call IDs are generated",
			body: chatSSE(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}},{"index":1,"function":{"name":"g"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			calls: `call_0 f {}; call_1 g {}`, finish: runlet.FinishToolCalls},
		{name: "arguments as an object (loose server)",
			body: chatSSE(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":{"k":"v"}}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			calls: `a f {"k":"v"}`, finish: runlet.FinishToolCalls},
		{name: "stop with tool calls is tool_calls",
			body: chatSSE(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "[DONE]"),
			calls: `a f {}`, finish: runlet.FinishToolCalls},
		{name: "finish reasons: content_filter",
			body: chatSSE(chunkHello, `{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`, "[DONE]"),
			text: "Hello", finish: runlet.FinishContentFilter},
		{name: "finish reasons: unknown",
			body: chatSSE(chunkHello, `{"choices":[{"index":0,"delta":{},"finish_reason":"eos_token"}]}`, "[DONE]"),
			text: "Hello", finish: runlet.FinishOther},
		{name: "finish reasons: function_call",
			body:   chatSSE(`{"choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}`, "[DONE]"),
			finish: runlet.FinishToolCalls},
		{name: "both reasoning fields: reasoning_content wins",
			body:   chatSSE(`{"choices":[{"index":0,"delta":{"reasoning_content":"R","reasoning":"R"}}]}`, chunkFinish, "[DONE]"),
			reason: "R", finish: runlet.FinishStop},
		{name: "surrogate pair split across chunks",
			body: chatSSE(`{"choices":[{"index":0,"delta":{"content":"a\ud83d"}}]}`, `{"choices":[{"index":0,"delta":{"content":""}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"\ude00b"}}]}`, chunkFinish, "[DONE]"),
			text: "a😀b", finish: runlet.FinishStop},
		{name: "lone surrogates become U+FFFD",
			body:   chatSSE(`{"choices":[{"index":0,"delta":{"content":"\ud83dx\ude00"}}]}`, `{"choices":[{"index":0,"delta":{"content":"\ude00y\ud83d"}}]}`, chunkFinish, "[DONE]"),
			text:   "\ufffdx\ufffd\ufffdy\ufffd",
			finish: runlet.FinishStop},
		{name: "raw UTF-8 split across chunks",
			body:   chatSSE("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xe6\x9d\"}}]}", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xb1\"}}]}", chunkFinish, "[DONE]"),
			text:   "東",
			finish: runlet.FinishStop},
		{name: "think tags split across deltas",
			body: chatSSE(`{"choices":[{"index":0,"delta":{"content":"\n<thi"}}]}`, `{"choices":[{"index":0,"delta":{"content":"nk>\nplan</th"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"ink>\n\nAnswer </think> stays"}}]}`, chunkFinish, "[DONE]"),
			thinking: true, reason: "plan", text: "Answer </think> stays", finish: runlet.FinishStop},
		{name: "think tags: unclosed block is all reasoning",
			body:     chatSSE(`{"choices":[{"index":0,"delta":{"content":"<think>never ends </thi"}}]}`, chunkFinish, "[DONE]"),
			thinking: true, reason: "never ends </thi", finish: runlet.FinishStop},
		{name: "think tags: not at the start is text",
			body:     chatSSE(`{"choices":[{"index":0,"delta":{"content":"Hi <think>x</think>"}}]}`, chunkFinish, "[DONE]"),
			thinking: true, text: "Hi <think>x</think>", finish: runlet.FinishStop},
		{name: "think tags: a prefix that is not a tag",
			body:     chatSSE(`{"choices":[{"index":0,"delta":{"content":"<th"}}]}`, `{"choices":[{"index":0,"delta":{"content":"ree"}}]}`, chunkFinish, "[DONE]"),
			thinking: true, text: "<three", finish: runlet.FinishStop},
		{name: "think tags: only a prefix at the end",
			body:     chatSSE(`{"choices":[{"index":0,"delta":{"content":"  <thi"}}]}`, chunkFinish, "[DONE]"),
			thinking: true, text: "  <thi", finish: runlet.FinishStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, resp, err := decodeDirect("p", tt.body, tt.thinking)
			if tt.err != nil {
				var pe *runlet.ProviderError
				if !errors.Is(err, tt.err) || !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want a *runlet.ProviderError wrapping %v mentioning %q", err, tt.err, tt.errText)
				}
				if pe.Provider != "p" {
					t.Errorf("provider = %q", pe.Provider)
				}
				if errors.Is(err, runlet.ErrStreamIncomplete) != pe.Retryable {
					t.Errorf("retryable = %v for %v", pe.Retryable, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if got := resp.Message.Text(); got != tt.text {
				t.Errorf("text = %q, want %q", got, tt.text)
			}
			if got := resp.Message.Reasoning(); got != tt.reason {
				t.Errorf("reasoning = %q, want %q", got, tt.reason)
			}
			var calls []string
			for _, c := range resp.Message.ToolCalls() {
				calls = append(calls, c.ID+" "+c.Name+" "+string(c.Arguments))
			}
			if got := strings.Join(calls, "; "); got != tt.calls {
				t.Errorf("calls = %q, want %q", got, tt.calls)
			}
			if resp.FinishReason != tt.finish {
				t.Errorf("finish = %s, want %s", resp.FinishReason, tt.finish)
			}
			var text, reason strings.Builder
			for _, ev := range events {
				switch ev.Kind {
				case runlet.StreamTextDelta:
					text.WriteString(ev.Delta)
				case runlet.StreamReasoningDelta:
					reason.WriteString(ev.Delta)
				}
			}
			if text.String() != tt.text || reason.String() != tt.reason {
				t.Errorf("deltas %q / %q do not add up", text.String(), reason.String())
			}
		})
	}
}

// Errors sent inside a stream: Groq's "event: error", OpenAI's data: {"error"},
// OpenRouter's error field beside choices; retryable by type or status. A
// status the error names (status_code, a numeric code) is its StatusCode,
// so it reads "HTTP 503" as a response's status does.
func TestChatStreamErrorEvents(t *testing.T) {
	tests := []struct {
		name      string
		body      []byte
		retryable bool
		typ, code string
		msg       string
		status    int // the HTTP status the error names
	}{
		{"event error", []byte("data: " + chunkHello + "\n\nevent: error\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n"),
			true, "server_error", "", "overloaded", 0},
		{"data error", chatSSE(chunkHello, `{"error":{"message":"Rate limit","type":"requests","code":"rate_limit_exceeded","status_code":429}}`),
			true, "requests", "rate_limit_exceeded", "Rate limit", 429},
		{"numeric code", chatSSE(`{"id":"x","error":{"code":503,"message":"upstream down"},"choices":[{"index":0,"delta":{"content":"a"}}]}`),
			true, "", "", "upstream down", 503},
		{"invalid request", chatSSE(`{"error":{"message":"bad","type":"invalid_request_error","code":null}}`),
			false, "invalid_request_error", "", "bad", 0},
		{"not JSON", []byte("event: error\ndata: Internal Server Error\n\n"), false, "", "", "Internal Server Error", 0},
		{"empty", []byte("event: error\ndata:\n\n"), false, "", "", "error in response", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, resp, err := decodeDirect("p", tt.body, false)
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) || resp != nil {
				t.Fatalf("err = %v resp = %v", err, resp)
			}
			if pe.Retryable != tt.retryable || pe.Type != tt.typ || pe.Code != tt.code || pe.Message != tt.msg || pe.StatusCode != tt.status {
				t.Errorf("got %+v", pe)
			}
		})
	}
}

// A server that ignores "stream": true and answers with JSON still works,
// and a JSON error object with status 200 is an error.
func TestChatStreamJSONAnswer(t *testing.T) {
	body := []byte(`{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	srv, m := chatTestServer(t, Config{}, runlettest.OpenAIChatReply{Body: body})
	_ = srv
	// The fake server labels Body by the request's stream flag; serve JSON
	// with a JSON content type through a responder-less fault instead.
	srv.InjectFault(runlettest.Fault{Status: 200, Body: string(body), Header: map[string][]string{"Content-Type": {"application/json"}}})
	events, resp, err := collect(m.Stream(context.Background(), userReq("hi")))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "Hi" || len(events) != 1 || resp.Usage.TotalTokens != 2 {
		t.Errorf("resp %+v events %+v", resp, events)
	}
	srv.InjectFault(runlettest.Fault{Status: 200, Body: `{"error":{"message":"quota","type":"insufficient_quota"}}`,
		Header: map[string][]string{"Content-Type": {"application/json; charset=utf-8"}}})
	_, _, err = collect(m.Stream(context.Background(), userReq("hi")))
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.Message != "quota" || pe.Type != "insufficient_quota" {
		t.Errorf("err = %v", err)
	}
}
