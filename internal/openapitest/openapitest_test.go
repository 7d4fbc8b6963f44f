package openapitest

import (
	"strings"
	"testing"
)

func TestValidChatRequests(t *testing.T) {
	bodies := []string{
		`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`,
		// nullable fields accept null
		`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":null,"frequency_penalty":null}`,
		`{"model":"gpt-4o","messages":[
			{"role":"system","content":"be brief"},
			{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"ok"}],
		  "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}],
		  "tool_choice":{"type":"function","function":{"name":"f"}},
		  "stream":true,"stream_options":{"include_usage":true},
		  "response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"},"strict":true}}}`,
	}
	for _, b := range bodies {
		Validate(t, "CreateChatCompletionRequest", []byte(b))
	}
}

func TestInvalidChatRequestsRejected(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"missing messages", `{"model":"gpt-4o"}`, "messages"},
		{"empty messages", `{"model":"gpt-4o","messages":[]}`, "messages"},
		{"unknown role", `{"model":"gpt-4o","messages":[{"role":"robot","content":"x"}]}`, "messages"},
		{"tool message without call id", `{"model":"gpt-4o","messages":[{"role":"tool","content":"x"}]}`, "messages"},
		{"temperature out of range", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"temperature":7}`, "temperature"},
		{"null where not nullable", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":"yes"}}`, "include_usage"},
		{"bad tool choice", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"tool_choice":"sometimes"}`, "tool_choice"},
		{"not JSON", `{"model":`, "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("CreateChatCompletionRequest", []byte(tt.body))
			if err == nil {
				t.Fatalf("invalid body accepted: %s", tt.body)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error does not mention %q:\n%v", tt.want, err)
			}
		})
	}
}

func TestUnknownSchema(t *testing.T) {
	if err := Check("NoSuchSchema", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "NoSuchSchema") {
		t.Fatalf("err = %v", err)
	}
}

// Every component schema compiles after the dialect rewrite, so helpers for
// the Responses API (and anything else) can rely on this package too.
func TestAllComponentsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every schema")
	}
	if _, err := Schema("CreateChatCompletionRequest"); err != nil {
		t.Fatal(err)
	}
	for name := range defs {
		if _, err := Schema(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestResponsesSchemas(t *testing.T) {
	Validate(t, "CreateResponse", []byte(`{"model":"gpt-4o","input":"hi","store":false}`))
	Validate(t, "CreateChatCompletionResponse", []byte(`{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o",
		"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":"hi","refusal":null}}]}`))
}
