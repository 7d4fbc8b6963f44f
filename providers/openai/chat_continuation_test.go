package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Gemini's OpenAI-compatible endpoint attaches a thought signature to each
// tool call (tool_calls[].extra_content.google.thought_signature; in 2025
// on the message). It is kept on the call and sent back unchanged on that
// call, only to the adapter that received it.

// toolCallSig is a signature with the characters a re-encoding would change.
const toolCallSig = "CiQBz+/Ab==="

func signedChunks(sig string) string {
	return `data: {"id":"g1","object":"chat.completion.chunk","created":1,"model":"gemini-3-pro-preview","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"function-call-1","index":0,"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"},"extra_content":{"google":{"thought_signature":"` + sig + `"}}},{"id":"function-call-2","index":1,"type":"function","function":{"name":"get_time","arguments":"{}"}}]}}]}` + "\n\n" +
		`data: {"id":"g1","object":"chat.completion.chunk","created":1,"model":"gemini-3-pro-preview","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}` + "\n\n" +
		"data: [DONE]\n\n"
}

func TestChatGeminiSignatureKeptAndSentBack(t *testing.T) {
	recorded := readFixture(t, "compatible/pydantic-gemini-compat-nonstream-tool-call-message-signature.response.json")
	var rec struct {
		Choices []struct {
			Message struct {
				ExtraContent chatExtraContent `json:"extra_content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(recorded, &rec); err != nil {
		t.Fatal(err)
	}
	recSig := rec.Choices[0].Message.ExtraContent.Google.ThoughtSignature
	for _, tc := range []struct {
		name   string
		stream bool
		body   []byte
		sigs   []string // per call
	}{
		{"recorded, signature on the message", false, recorded, []string{recSig}},
		{"streamed, signature on the first call", true, []byte(signedChunks(toolCallSig)), []string{toolCallSig, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Body: tc.body})
			defer srv.Close()
			m := fastRetries(NewChatCompletions(Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gemini-3-pro-preview", Name: "gemini-compat"}))
			resp, err := call(m, context.Background(), tc.stream)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Message.ToolCalls()
			if len(calls) != len(tc.sigs) {
				t.Fatalf("calls %+v", calls)
			}
			for i, c := range calls {
				if c.Signature != tc.sigs[i] || (c.Signature != "") != (c.Provider == "gemini-compat") {
					t.Errorf("call %d: %+v", i, c)
				}
			}
			// The next request carries each signature on its call, byte for byte.
			next := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("q"), resp.Message}}
			for _, c := range calls {
				next.Messages = append(next.Messages, runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: c.ID, Content: "x"}}})
			}
			b, err := m.buildRequest(next, false)
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Messages []struct {
					ToolCalls []struct {
						ID           string          `json:"id"`
						ExtraContent json.RawMessage `json:"extra_content"`
					} `json:"tool_calls"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(b.body, &body); err != nil {
				t.Fatal(err)
			}
			sent := body.Messages[1].ToolCalls
			for i, want := range tc.sigs {
				got := string(sent[i].ExtraContent)
				if want == "" && got != "" || want != "" && got != `{"google":{"thought_signature":"`+want+`"}}` {
					t.Errorf("call %d sent extra_content %s", i, got)
				}
			}
			// Another adapter does not send the signature on.
			other := fastRetries(NewChatCompletions(Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "m", Name: "other"}))
			b, err = other.buildRequest(next, false)
			if err != nil || strings.Contains(string(b.body), "extra_content") {
				t.Errorf("foreign signature sent: %v %s", err, b.body)
			}
		})
	}
}

// A call a person edited on approval goes with the arguments that ran and
// Gemini's placeholder in place of the model's signature; the audit field
// stays home.
func TestChatGeminiEditedCallSignature(t *testing.T) {
	m := NewChatCompletions(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "gemini-3-pro-preview", Name: "gemini-compat"})
	req := &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{
			ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`),
			OriginalArguments: json.RawMessage(`{"city":"Paris"}`), Signature: toolCallSig, Provider: "gemini-compat",
		}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c1", Content: "sunny"}}},
	}}
	b, err := m.buildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	body := string(b.body)
	if !strings.Contains(body, `"arguments":"{\"city\":\"Rome\"}"`) || strings.Contains(body, "Paris") ||
		strings.Contains(body, toolCallSig) || !strings.Contains(body, `{"google":{"thought_signature":"skip_thought_signature_validator"}}`) {
		t.Errorf("edited call sent as %s", body)
	}
}
