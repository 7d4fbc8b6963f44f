package runlettest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/runlet/runlet/runlettest"
)

// anthropicPost sends a raw request to the fake server.
func anthropicPost(t *testing.T, srv *runlettest.AnthropicServer, path, body string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const anthropicBody = `{"model":"claude-test","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`

func anthropicStreamBody() string { return strings.Replace(anthropicBody, `{`, `{"stream":true,`, 1) }

type anthropicEvent struct {
	name string
	data map[string]any
}

// readAnthropicSSE parses an event stream and checks every event: line
// names the payload's type, as the API does.
func readAnthropicSSE(t *testing.T, r io.Reader) []anthropicEvent {
	t.Helper()
	var out []anthropicEvent
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
			continue
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			var data map[string]any
			if err := json.Unmarshal([]byte(v), &data); err != nil {
				t.Fatalf("bad data %q: %v", v, err)
			}
			if data["type"] != name {
				t.Errorf("event %q carries type %v", name, data["type"])
			}
			out = append(out, anthropicEvent{name, data})
		}
	}
	return out
}

func TestAnthropicServerValidates(t *testing.T) {
	srv := runlettest.NewAnthropicServer()
	defer srv.Close()
	srv.RequireAPIKey("good")
	key := http.Header{"X-Api-Key": {"good"}}
	tests := []struct {
		name, path, body string
		header           http.Header
		status           int
		typ              string
	}{
		{"wrong path", "/v1/complete", anthropicBody, key, 404, "not_found_error"},
		{"no key", "/v1/messages", anthropicBody, nil, 401, "authentication_error"},
		{"wrong key", "/v1/messages", anthropicBody, http.Header{"X-Api-Key": {"bad"}}, 401, "authentication_error"},
		{"no version", "/v1/messages", anthropicBody, http.Header{"X-Api-Key": {"good"}, "Anthropic-Version": {""}}, 400, "invalid_request_error"},
		{"not json", "/v1/messages", `{"model":`, key, 400, "invalid_request_error"},
		{"no model", "/v1/messages", `{"max_tokens":1,"messages":[{}]}`, key, 400, "invalid_request_error"},
		{"no max_tokens", "/v1/messages", `{"model":"m","messages":[{}]}`, key, 400, "invalid_request_error"},
		{"no messages", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[]}`, key, 400, "invalid_request_error"},
		{"script used up", "/v1/messages", anthropicBody, key, 500, "api_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := anthropicPost(t, srv, tt.path, tt.body, tt.header)
			var env struct {
				Type  string
				Error struct{ Type, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || env.Type != "error" || env.Error.Type != tt.typ || env.Error.Message == "" {
				t.Errorf("HTTP %d %+v", resp.StatusCode, env)
			}
		})
	}
	if n := len(srv.Requests()); n != len(tests) {
		t.Errorf("%d requests recorded", n)
	}
}

func TestAnthropicServerJSON(t *testing.T) {
	srv := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{
		Content: []runlettest.AnthropicBlock{
			runlettest.AnthropicRedactedThinking("opaque"),
			runlettest.AnthropicThinking("hmm", "sig"),
			runlettest.AnthropicText("Hi."),
			{Type: "server_tool_use", Raw: json.RawMessage(`{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}`)},
			runlettest.AnthropicToolUse("toolu_1", "f", `{"a":1}`),
			runlettest.AnthropicToolUse("toolu_2", "g", ""),
		},
		Usage: runlettest.AnthropicUsage{InputTokens: 3, OutputTokens: 4, CacheReadInputTokens: 5, CacheCreationInputTokens: 6},
	})
	defer srv.Close()
	resp := anthropicPost(t, srv, "/v1/messages", anthropicBody, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Request-Id") != "req_runlettest_1" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %v", resp.StatusCode, resp.Header)
	}
	got, _ := io.ReadAll(resp.Body)
	want := `{"id":"msg_runlettest_1","type":"message","role":"assistant","model":"claude-test","content":[
		{"type":"redacted_thinking","data":"opaque"},
		{"type":"thinking","thinking":"hmm","signature":"sig"},
		{"type":"text","text":"Hi."},
		{"type":"server_tool_use","id":"s1","name":"web_search","input":{}},
		{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}},
		{"type":"tool_use","id":"toolu_2","name":"g","input":{}}],
		"stop_reason":"tool_use","stop_sequence":null,
		"usage":{"input_tokens":3,"cache_creation_input_tokens":6,"cache_read_input_tokens":5,"output_tokens":4}}`
	var g, w any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("body\n%s", got)
	}
	if r := srv.Requests()[0]; r.Method != "POST" || r.Path != "/v1/messages" || r.JSON()["model"] != "claude-test" || r.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("recorded %+v", r)
	}
}

func TestAnthropicServerStream(t *testing.T) {
	srv := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{
		ID: "msg_x", Model: "claude-y",
		Content: []runlettest.AnthropicBlock{
			runlettest.AnthropicThinking("abcde", "sig"),
			runlettest.AnthropicText("hello"),
			runlettest.AnthropicToolUse("toolu_1", "f", `{"a":1}`),
			runlettest.AnthropicToolUse("toolu_2", "g", ""),
			runlettest.AnthropicRedactedThinking("opaque"),
		},
		StopReason: "pause_turn",
		Usage:      runlettest.AnthropicUsage{InputTokens: 3, OutputTokens: 9},
		ChunkSize:  2,
	})
	defer srv.Close()
	resp := anthropicPost(t, srv, "/v1/messages", anthropicStreamBody(), nil)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var got []string
	for _, ev := range readAnthropicSSE(t, resp.Body) {
		s := ev.name
		switch ev.name {
		case "message_start":
			m := ev.data["message"].(map[string]any)
			s += " " + m["id"].(string) + " " + m["model"].(string)
		case "content_block_start":
			cb, _ := json.Marshal(ev.data["content_block"])
			s += " " + string(cb)
		case "content_block_delta":
			d, _ := json.Marshal(ev.data["delta"])
			s += " " + string(d)
		case "message_delta":
			d, _ := json.Marshal(ev.data["delta"])
			u, _ := json.Marshal(ev.data["usage"])
			s += " " + string(d) + " " + string(u)
		}
		got = append(got, s)
	}
	want := []string{
		"message_start msg_x claude-y",
		`content_block_start {"signature":"","thinking":"","type":"thinking"}`,
		"ping",
		`content_block_delta {"thinking":"ab","type":"thinking_delta"}`,
		`content_block_delta {"thinking":"cd","type":"thinking_delta"}`,
		`content_block_delta {"thinking":"e","type":"thinking_delta"}`,
		`content_block_delta {"signature":"sig","type":"signature_delta"}`,
		"content_block_stop",
		`content_block_start {"text":"","type":"text"}`,
		`content_block_delta {"text":"he","type":"text_delta"}`,
		`content_block_delta {"text":"ll","type":"text_delta"}`,
		`content_block_delta {"text":"o","type":"text_delta"}`,
		"content_block_stop",
		`content_block_start {"id":"toolu_1","input":{},"name":"f","type":"tool_use"}`,
		`content_block_delta {"partial_json":"","type":"input_json_delta"}`,
		`content_block_delta {"partial_json":"{\"","type":"input_json_delta"}`,
		`content_block_delta {"partial_json":"a\"","type":"input_json_delta"}`,
		`content_block_delta {"partial_json":":1","type":"input_json_delta"}`,
		`content_block_delta {"partial_json":"}","type":"input_json_delta"}`,
		"content_block_stop",
		`content_block_start {"id":"toolu_2","input":{},"name":"g","type":"tool_use"}`,
		`content_block_delta {"partial_json":"","type":"input_json_delta"}`,
		"content_block_stop",
		`content_block_start {"data":"opaque","type":"redacted_thinking"}`,
		"content_block_stop",
		`message_delta {"stop_reason":"pause_turn","stop_sequence":null} {"output_tokens":9}`,
		"message_stop",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAnthropicServerScript(t *testing.T) {
	srv := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("one")}})
	defer srv.Close()
	srv.Enqueue(runlettest.AnthropicResponse{Body: []byte(`{"verbatim":true}`)})
	srv.SetResponder(func(r runlettest.WireRequest) runlettest.AnthropicResponse {
		return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("echo " + r.JSON()["model"].(string))}}
	})
	texts := []string{}
	for i := 0; i < 4; i++ {
		var body struct {
			Verbatim bool
			Content  []struct{ Text string }
		}
		resp := anthropicPost(t, srv, "/v1/messages", anthropicBody, nil)
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if body.Verbatim {
			texts = append(texts, "verbatim")
		} else {
			texts = append(texts, body.Content[0].Text)
		}
	}
	if want := []string{"one", "verbatim", "echo claude-test", "echo claude-test"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("answers %q", texts)
	}
}

func TestAnthropicServerFaults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	hello := runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("hello")}, ChunkSize: 1}
	srv := runlettest.NewAnthropicServer()
	defer srv.Close()

	t.Run("status", func(t *testing.T) {
		srv.InjectFault(runlettest.Fault{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, Header: http.Header{"Retry-After": {"3"}}})
		srv.Enqueue(hello)
		resp := anthropicPost(t, srv, "/v1/messages", anthropicBody, nil)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 529 || resp.Header.Get("Retry-After") != "3" || !strings.Contains(string(b), "overloaded_error") {
			t.Errorf("HTTP %d %s", resp.StatusCode, b)
		}
		// The script was not consumed.
		resp = anthropicPost(t, srv, "/v1/messages", anthropicBody, nil)
		if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "hello") {
			t.Errorf("next answer %s", b)
		}
	})
	t.Run("error answer", func(t *testing.T) {
		srv.Enqueue(runlettest.AnthropicResponse{Error: &runlettest.AnthropicError{Type: "rate_limit_error", Message: "slow"}})
		resp := anthropicPost(t, srv, "/v1/messages", anthropicBody, nil)
		if resp.StatusCode != 429 {
			t.Errorf("HTTP %d", resp.StatusCode)
		}
		srv.Enqueue(runlettest.AnthropicResponse{Error: &runlettest.AnthropicError{Status: 503, Type: "api_error", Message: "down"}})
		if resp := anthropicPost(t, srv, "/v1/messages", anthropicBody, nil); resp.StatusCode != 503 {
			t.Errorf("HTTP %d", resp.StatusCode)
		}
	})
	t.Run("error event", func(t *testing.T) {
		r := hello
		r.Error, r.ErrorAfter = &runlettest.AnthropicError{Type: "overloaded_error", Message: "Overloaded"}, 4
		srv.Enqueue(r)
		resp := anthropicPost(t, srv, "/v1/messages", anthropicStreamBody(), nil)
		events := readAnthropicSSE(t, resp.Body)
		if resp.StatusCode != 200 || len(events) != 5 || events[4].name != "error" {
			t.Fatalf("HTTP %d, %d events", resp.StatusCode, len(events))
		}
		e := events[4].data["error"].(map[string]any)
		if e["type"] != "overloaded_error" || events[4].data["request_id"] == "" {
			t.Errorf("error event %v", events[4].data)
		}
	})
	t.Run("truncate stream", func(t *testing.T) {
		srv.Enqueue(hello)
		srv.InjectFault(runlettest.Fault{Truncate: true, AfterEvents: 3})
		resp := anthropicPost(t, srv, "/v1/messages", anthropicStreamBody(), nil)
		if events := readAnthropicSSE(t, resp.Body); len(events) != 3 {
			t.Errorf("%d events", len(events))
		}
	})
	t.Run("truncate json", func(t *testing.T) {
		srv.Enqueue(hello)
		srv.InjectFault(runlettest.Fault{Truncate: true})
		resp := anthropicPost(t, srv, "/v1/messages", anthropicBody, nil)
		b, err := io.ReadAll(resp.Body)
		if err != nil || json.Valid(b) || len(b) == 0 {
			t.Errorf("body %q, %v", b, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		srv.Enqueue(hello)
		srv.InjectFault(runlettest.Fault{Reset: true, AfterEvents: 2})
		resp := anthropicPost(t, srv, "/v1/messages", anthropicStreamBody(), nil)
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Error("reset stream read cleanly")
		}
		// A non-streaming reset comes before any body byte (the status
		// line may already be out): the request or its body fails.
		srv.InjectFault(runlettest.Fault{Reset: true})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(anthropicBody))
		req.Header.Set("Anthropic-Version", "2023-06-01")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				t.Errorf("reset request read %q", b)
			}
		}
	})
	http.DefaultClient.CloseIdleConnections()
}
