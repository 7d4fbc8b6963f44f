package runlettest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

func ExampleNewOpenAIChatServer() {
	// Two scripted turns: parallel tool calls, then the answer.
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Tokyo"}`},
		}},
		runlettest.OpenAIChatReply{Text: "Paris is sunny; Tokyo is rainy.", Deltas: 4},
	)
	defer srv.Close()
	// The first request is rate limited; the adapter waits the
	// retry-after-ms the server asks for and tries again.
	srv.InjectFault(runlettest.Fault{
		Status: 429,
		Header: http.Header{"Retry-After-Ms": {"10"}},
		Body:   `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
	})

	model := openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test-key", Model: "gpt-4o-mini"})
	req := &runlet.ModelRequest{
		Messages: []runlet.Message{runlet.UserText("Weather in Paris and Tokyo?")},
		Tools:    []runlet.ToolSpec{{Name: "get_weather"}},
	}
	ctx := context.Background()
	resp, err := model.Generate(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("turn 1:", resp.FinishReason)
	results := runlet.Message{Role: runlet.RoleTool}
	for _, c := range resp.Message.ToolCalls() {
		fmt.Println("  call", c.ID, c.Name, string(c.Arguments))
		results.Parts = append(results.Parts, runlet.ToolResultPart{CallID: c.ID, Content: "sunny"})
	}

	req.Messages = append(req.Messages, resp.Message, results)
	fmt.Print("turn 2:")
	for ev, err := range model.Stream(ctx, req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind == runlet.StreamTextDelta {
			fmt.Printf(" %q", ev.Delta)
		}
	}
	fmt.Println()

	reqs := srv.Requests()
	fmt.Println("requests:", len(reqs), reqs[2].Header.Get("Authorization"))
	fmt.Println("last request:", string(reqs[2].Body[:60])+"…")

	// Output:
	// turn 1: tool_calls
	//   call call_1 get_weather {"city":"Paris"}
	//   call call_2 get_weather {"city":"Tokyo"}
	// turn 2: "Paris is" " sunny; " "Tokyo is" " rainy."
	// requests: 3 Bearer test-key
	// last request: {"model":"gpt-4o-mini","messages":[{"role":"user","content":…
}

// wireEvents reads a raw event stream into its data payloads.
func chatWireEvents(t *testing.T, body io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		} else if line != "" {
			t.Fatalf("unexpected line %q", line)
		}
	}
	return out
}

func chatPost(t *testing.T, srv *runlettest.OpenAIChatServer, body string) *http.Response {
	t.Helper()
	resp, err := srv.Client().Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// The server's chunks and bodies are what the API's schema describes.
func TestOpenAIChatServerWire(t *testing.T) {
	reply := runlettest.OpenAIChatReply{
		Reasoning: "hmm", Text: "Hello, world!",
		ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "f", Arguments: `{"a":1}`}, {Name: "g", Arguments: `{}`}},
		Usage:     &runlettest.OpenAIChatUsage{PromptTokens: 5, CompletionTokens: 7, ReasoningTokens: 2, CachedTokens: 1},
	}
	srv := runlettest.NewOpenAIChatServer(reply, reply, reply)
	defer srv.Close()
	srv.ChunkSize = 5

	// Streaming with usage.
	resp := chatPost(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	events := chatWireEvents(t, resp.Body)
	if events[len(events)-1] != "[DONE]" {
		t.Fatalf("last event %q", events[len(events)-1])
	}
	var sawUsage, sawFinish bool
	for _, e := range events[:len(events)-1] {
		// The schema misses compatible servers' reasoning_content; check
		// the rest of the chunk.
		var m map[string]any
		if err := json.Unmarshal([]byte(e), &m); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(e, "reasoning_content") {
			continue
		}
		openapitest.Validate(t, "CreateChatCompletionStreamResponse", []byte(e))
		if strings.Contains(e, `"usage":{`) {
			sawUsage = true
			if !strings.Contains(e, `"choices":[]`) || !strings.Contains(e, `"total_tokens":12`) || !strings.Contains(e, `"reasoning_tokens":2`) {
				t.Errorf("usage chunk %s", e)
			}
		}
		if strings.Contains(e, `"finish_reason":"tool_calls"`) {
			sawFinish = true
		}
	}
	if !sawUsage || !sawFinish {
		t.Errorf("usage %v finish %v", sawUsage, sawFinish)
	}
	if !strings.Contains(events[1], `"reasoning_content":"hmm"`) {
		t.Errorf("reasoning chunk %s", events[1])
	}

	// Streaming without include_usage: no usage chunk.
	resp = chatPost(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	for _, e := range chatWireEvents(t, resp.Body) {
		if strings.Contains(e, `"usage"`) {
			t.Errorf("usage chunk without include_usage: %s", e)
		}
	}

	// Non-streaming.
	resp = chatPost(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	delete(msg, "reasoning_content")
	b, _ := json.Marshal(m)
	openapitest.Validate(t, "CreateChatCompletionResponse", b)
	if !strings.Contains(string(body), `"reasoning_content":"hmm"`) || resp.Header.Get("X-Request-Id") != "req_runlettest_3" {
		t.Errorf("body %s", body)
	}
}

func TestOpenAIChatServerErrors(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "x"})
	defer srv.Close()
	srv.RequireAPIKey("k")
	tests := []struct {
		path, auth, body string
		status           int
		contains         string
	}{
		{"/v1/models", "Bearer k", `{}`, 404, "no route"},
		{"/v1/chat/completions", "Bearer nope", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 401, "invalid_api_key"},
		{"/v1/chat/completions", "Bearer k", `{"model":`, 400, "could not parse"},
		{"/v1/chat/completions", "Bearer k", `{"model":"m","messages":[]}`, 400, "empty array"},
		{"/v1/chat/completions", "Bearer k", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 200, `"content":"x"`},
		{"/v1/chat/completions", "Bearer k", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 500, "no scripted reply"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+tt.path, strings.NewReader(tt.body))
		req.Header.Set("Authorization", tt.auth)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !bytes.Contains(body, []byte(tt.contains)) {
			t.Errorf("%s: %d %s", tt.path, resp.StatusCode, body)
		}
		if tt.status != 200 {
			var env struct {
				Error struct{ Message, Type string }
			}
			if json.Unmarshal(body, &env) != nil || env.Error.Message == "" || env.Error.Type == "" {
				t.Errorf("not an OpenAI error envelope: %s", body)
			}
		}
	}
	if n := len(srv.Requests()); n != len(tests) {
		t.Errorf("recorded %d requests", n)
	}
}

// Splits: exact delta counts, byte cuts that leave raw partial UTF-8 in the
// JSON, and \u escapes cut inside a surrogate pair.
func TestOpenAIChatServerSplits(t *testing.T) {
	text := "ab😀東"
	tests := []struct {
		split  runlettest.ChatSplit
		size   int
		deltas int
		want   []string // content values as raw JSON literals
	}{
		{runlettest.ChatSplitRunes, 2, 0, []string{`"ab"`, `"😀東"`}},
		{runlettest.ChatSplitRunes, 0, 3, []string{`"ab"`, `"😀東"`}},
		{runlettest.ChatSplitRunes, 1, 4, []string{`"a"`, `"b"`, `"😀"`, `"東"`}},
		{runlettest.ChatSplitBytes, 3, 0, []string{`"ab` + "\xf0" + `"`, "\"\x9f\x98\x80\"", "\"\xe6\x9d\xb1\""}},
		{runlettest.ChatSplitUTF16, 3, 0, []string{`"ab\ud83d"`, `"\ude00\u6771"`}},
	}
	for _, tt := range tests {
		srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: text, Deltas: tt.deltas})
		srv.Split, srv.ChunkSize = tt.split, tt.size
		resp := chatPost(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
		var got []string
		for _, e := range chatWireEvents(t, resp.Body) {
			if i := strings.Index(e, `"content":"`); i >= 0 && !strings.Contains(e, `"role"`) {
				rest := e[i+len(`"content":`):]
				got = append(got, rest[:strings.Index(rest, `},"logprobs"`)])
			}
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("split %d size %d deltas %d: got %q, want %q", tt.split, tt.size, tt.deltas, got, tt.want)
		}
		srv.Close()
	}
}

// Faults: status, reset and truncation, per request, in order.
func TestOpenAIChatServerFaults(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "hello world", Error: &runlettest.OpenAIChatError{Type: "server_error", Message: "boom"}, ErrorAfter: 2})
	defer srv.Close()
	srv.ChunkSize = 1
	resp := chatPost(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	events := chatWireEvents(t, resp.Body)
	if len(events) != 3 || !strings.Contains(events[2], `"error":{`) {
		t.Errorf("mid-stream error: %q", events)
	}

	srv.Enqueue(runlettest.OpenAIChatReply{Text: "hello world"})
	srv.InjectFault(runlettest.Fault{Truncate: true, AfterEvents: 4})
	resp = chatPost(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if events := chatWireEvents(t, resp.Body); len(events) != 4 {
		t.Errorf("truncated stream: %d events", len(events))
	}

	srv.Enqueue(runlettest.OpenAIChatReply{Text: "x"})
	srv.InjectFault(runlettest.Fault{Status: 503, Body: "unavailable"})
	resp = chatPost(t, srv, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 503 {
		t.Errorf("status %d", resp.StatusCode)
	}
}
