package openai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
)

func respToolSpec(t testing.TB, name, desc, schema string) runlet.ToolSpec {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	return runlet.ToolSpec{Name: name, Description: desc, InputSchema: &s}
}

// respBody builds the request body, checks it against the OpenAPI schema
// CreateResponse and returns it decoded.
func respBody(t *testing.T, m *Responses, req *runlet.ModelRequest, stream bool) map[string]any {
	t.Helper()
	b, err := m.buildRequest(req, stream)
	if err != nil {
		t.Fatalf("buildRequest: %v", err)
	}
	respValidate(t, b.body)
	var out map[string]any
	if err := json.Unmarshal(b.body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func respWantJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	if respJSON(got) != respJSON(w) {
		t.Errorf("%s:\n got  %s\n want %s", what, respJSON(got), respJSON(w))
	}
}

func respPtr[T any](v T) *T { return &v }

// respValidate checks a request body against the OpenAPI schema
// CreateResponse.
func respValidate(t testing.TB, body []byte) {
	t.Helper()
	openapitest.Validate(t, "CreateResponse", body)
}

func TestResponsesRequestBasics(t *testing.T) {
	m := respModel("http://unused")
	body := respBody(t, m, &runlet.ModelRequest{
		Instructions: "Be brief.",
		Messages:     []runlet.Message{runlet.UserText("Hi")},
		Settings:     runlet.Settings{Temperature: respPtr(0.2), TopP: respPtr(0.9), MaxOutputTokens: 256, StopSequences: []string{"END"}},
	}, false)
	respWantJSON(t, "body", body, `{
		"model": "gpt-test", "instructions": "Be brief.",
		"input": [{"type": "message", "role": "user", "content": "Hi"}],
		"max_output_tokens": 256, "temperature": 0.2, "top_p": 0.9, "store": false}`)

	// Stream adds "stream": true and nothing else.
	body = respBody(t, m, &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("Hi")}}, true)
	respWantJSON(t, "stream body", body, `{"model": "gpt-test", "input": [{"type": "message", "role": "user", "content": "Hi"}], "store": false, "stream": true}`)
}

func TestResponsesRequestMultimodal(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	body := respBody(t, respModel("http://unused"), &runlet.ModelRequest{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{
		runlet.TextPart{Text: "What is in these?"},
		runlet.ImagePart{URL: "https://example.com/cat.jpg", Detail: "low"},
		runlet.ImagePart{Data: png},
		runlet.ImagePart{Data: []byte("GIF89a"), MediaType: "image/gif"},
		runlet.FilePart{Name: "report.pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.7")},
		runlet.FilePart{URL: "https://example.com/paper.pdf"},
	}}}}, false)
	respWantJSON(t, "input", body["input"], `[{"type": "message", "role": "user", "content": [
		{"type": "input_text", "text": "What is in these?"},
		{"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "low"},
		{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", "detail": "auto"},
		{"type": "input_image", "image_url": "data:image/gif;base64,R0lGODlh", "detail": "auto"},
		{"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjc="},
		{"type": "input_file", "file_url": "https://example.com/paper.pdf"}]}]`)
}

func TestResponsesRequestTools(t *testing.T) {
	weather := respToolSpec(t, "get_weather", "Weather for a city.", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	now := runlet.ToolSpec{Name: "now"} // no schema, no description
	m := respModel("http://unused")

	body := respBody(t, m, &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("?")}, Tools: []runlet.ToolSpec{weather, now}}, false)
	respWantJSON(t, "tools", body["tools"], `[
		{"type": "function", "name": "get_weather", "description": "Weather for a city.", "strict": false,
		 "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
		{"type": "function", "name": "now", "strict": false, "parameters": {"type": "object", "properties": {}}}]`)
	if _, set := body["tool_choice"]; set {
		t.Errorf("tool_choice set without a ToolChoice: %v", body["tool_choice"])
	}

	body = respBody(t, m, &runlet.ModelRequest{Tools: []runlet.ToolSpec{weather}, Options: map[string]any{"strict": true}}, false)
	if tl := body["tools"].([]any)[0].(map[string]any); tl["strict"] != true {
		t.Errorf("strict option: %v", tl)
	}

	// Built-in tools from the "tools" option follow the function tools.
	body = respBody(t, m, &runlet.ModelRequest{Tools: []runlet.ToolSpec{now}, Options: map[string]any{"tools": []any{map[string]any{"type": "web_search"}}}}, false)
	respWantJSON(t, "tools with built-ins", body["tools"], `[
		{"type": "function", "name": "now", "strict": false, "parameters": {"type": "object", "properties": {}}},
		{"type": "web_search"}]`)
	body = respBody(t, m, &runlet.ModelRequest{Options: map[string]any{"tools": []map[string]any{{"type": "web_search"}}}}, false)
	respWantJSON(t, "built-ins only", body["tools"], `[{"type": "web_search"}]`)
	if _, err := m.buildRequest(&runlet.ModelRequest{Options: map[string]any{"tools": "web_search"}}, false); err == nil {
		t.Error(`"tools": "web_search" accepted`)
	}

	for _, tc := range []struct {
		choice runlet.ToolChoice
		want   string
	}{
		{runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}, `"auto"`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceNone}, `"none"`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}, `"required"`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"}, `{"type": "function", "name": "get_weather"}`},
	} {
		body := respBody(t, m, &runlet.ModelRequest{Tools: []runlet.ToolSpec{weather}, ToolChoice: tc.choice}, false)
		respWantJSON(t, "tool_choice "+string(tc.choice.Mode), body["tool_choice"], tc.want)
	}
	for _, bad := range []runlet.ToolChoice{{Mode: runlet.ToolChoiceTool}, {Mode: "sometimes"}} {
		if _, err := m.buildRequest(&runlet.ModelRequest{Tools: []runlet.ToolSpec{weather}, ToolChoice: bad}, false); err == nil {
			t.Errorf("tool choice %+v accepted", bad)
		}
	}
	if _, err := m.buildRequest(&runlet.ModelRequest{Tools: []runlet.ToolSpec{{}}}, false); err == nil {
		t.Error("tool without a name accepted")
	}
}

func TestResponsesRequestOutputSchema(t *testing.T) {
	schema := respToolSpec(t, "x", "", `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`).InputSchema
	m := respModel("http://unused")
	req := &runlet.ModelRequest{
		Messages:     []runlet.Message{runlet.UserText("?")},
		OutputSchema: &runlet.OutputSchema{Name: "answer", Description: "The answer.", Schema: schema, Strict: true},
		Options:      map[string]any{"text": map[string]any{"verbosity": "low"}},
	}
	body := respBody(t, m, req, false)
	respWantJSON(t, "text", body["text"], `{"verbosity": "low", "format": {"type": "json_schema", "name": "answer", "description": "The answer.", "strict": true,
		"schema": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"], "additionalProperties": false}}}`)
	if req.Options["text"].(map[string]any)["format"] != nil {
		t.Error("the caller's text option was modified")
	}

	// Unnamed schemas get a name (the API requires one) and are strict when
	// they can be; a format in the text option wins.
	body = respBody(t, m, &runlet.ModelRequest{OutputSchema: &runlet.OutputSchema{Schema: schema}}, false)
	if f := body["text"].(map[string]any)["format"].(map[string]any); f["name"] != "output" || f["strict"] != true {
		t.Errorf("format = %v", f)
	}
	body = respBody(t, m, &runlet.ModelRequest{OutputSchema: &runlet.OutputSchema{Schema: schema}, Options: map[string]any{"text": map[string]any{"format": map[string]any{"type": "json_object"}}}}, false)
	respWantJSON(t, "text", body["text"], `{"format": {"type": "json_object"}}`)
}

func TestResponsesRequestOptions(t *testing.T) {
	m := respModel("http://unused")
	user := []runlet.Message{runlet.UserText("?")}

	// Reasoning while stateless asks for encrypted reasoning, once.
	body := respBody(t, m, &runlet.ModelRequest{Messages: user, Options: map[string]any{
		"reasoning": map[string]any{"effort": "low", "summary": "auto"},
		"include":   []string{"message.output_text.logprobs", "reasoning.encrypted_content"},
	}}, false)
	respWantJSON(t, "reasoning", body["reasoning"], `{"effort": "low", "summary": "auto"}`)
	respWantJSON(t, "include", body["include"], `["message.output_text.logprobs", "reasoning.encrypted_content"]`)
	body = respBody(t, m, &runlet.ModelRequest{Messages: user, Options: map[string]any{"reasoning": map[string]any{}}}, false)
	respWantJSON(t, "include", body["include"], `["reasoning.encrypted_content"]`)
	// Not without reasoning, nor when OpenAI stores the response.
	body = respBody(t, m, &runlet.ModelRequest{Messages: user}, false)
	if _, set := body["include"]; set {
		t.Errorf("include without reasoning: %v", body["include"])
	}
	body = respBody(t, m, &runlet.ModelRequest{Messages: user, Options: map[string]any{"reasoning": map[string]any{"effort": "high"}, "store": true}}, false)
	if _, set := body["include"]; set || body["store"] != true {
		t.Errorf("store true: include %v store %v", body["include"], body["store"])
	}

	// Documented pass-through keys and unknown keys land in the body as
	// given; nil removes a key; "model" overrides the configured model.
	body = respBody(t, m, &runlet.ModelRequest{Messages: user, Settings: runlet.Settings{Temperature: respPtr(1.0)}, Options: map[string]any{
		"model":               "gpt-5-mini",
		"truncation":          "auto",
		"service_tier":        "flex",
		"metadata":            map[string]string{"run": "42"},
		"parallel_tool_calls": false,
		"max_tool_calls":      3,
		"prompt_cache_key":    "k1",
		"temperature":         nil,
	}}, false)
	respWantJSON(t, "body", body, `{"model": "gpt-5-mini", "input": [{"type": "message", "role": "user", "content": "?"}], "store": false,
		"truncation": "auto", "service_tier": "flex", "metadata": {"run": "42"}, "parallel_tool_calls": false, "max_tool_calls": 3, "prompt_cache_key": "k1"}`)

	// A future field needs no release.
	b, err := m.buildRequest(&runlet.ModelRequest{Messages: user, Options: map[string]any{"brand_new_field": map[string]any{"x": 1}}}, false)
	if err != nil || !strings.Contains(string(b.body), `"brand_new_field":{"x":1}`) {
		t.Errorf("unknown key: %s, %v", b.body, err)
	}

	for _, bad := range []map[string]any{
		{"model": 5}, {"model": ""}, {"store": "yes"}, {"strict": 1}, {"previous_response_id": 7},
		{"include": "reasoning.encrypted_content"}, {"include": []any{1}}, {"text": "low"},
		{"stream": false}, {"input": "hi"}, {"metadata": func() {}},
	} {
		_, err := m.buildRequest(&runlet.ModelRequest{Messages: user, Options: bad}, false)
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || pe.Provider != "openai" {
			t.Errorf("options %v: err = %v, want *ProviderError", bad, err)
		}
	}
	noModel := NewResponses(Config{BaseURL: "http://unused", APIKey: "k"})
	if _, err := noModel.buildRequest(&runlet.ModelRequest{Messages: user}, false); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("no model: %v", err)
	}
}

func TestResponsesRequestHistory(t *testing.T) {
	m := respModel("http://unused")
	body := respBody(t, m, &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("Weather in Paris and Rome?"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.TextPart{Text: "Let me check. "},
			runlet.TextPart{Text: "One moment."},
			runlet.ToolCallPart{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), ItemID: "fc_1", Provider: "openai"},
			runlet.ToolCallPart{ID: "call_2", Name: "get_weather", ItemID: "fc_2", Provider: "openai"},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{
			runlet.ToolResultPart{CallID: "call_1", Name: "get_weather", Content: "18°C"},
			runlet.ToolResultPart{CallID: "call_2", Name: "get_weather", Content: "city not found", IsError: true},
		}},
		runlet.AssistantText("Paris is 18°C; Rome was not found."),
		runlet.UserText("Thanks"),
	}}, false)
	// No reasoning precedes the calls, so their item IDs are not needed.
	respWantJSON(t, "input", body["input"], `[
		{"type": "message", "role": "user", "content": "Weather in Paris and Rome?"},
		{"type": "message", "role": "assistant", "content": "Let me check. One moment."},
		{"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
		{"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": "{}"},
		{"type": "function_call_output", "call_id": "call_1", "output": "18°C"},
		{"type": "function_call_output", "call_id": "call_2", "output": "city not found"},
		{"type": "message", "role": "assistant", "content": "Paris is 18°C; Rome was not found."},
		{"type": "message", "role": "user", "content": "Thanks"}]`)

	for _, bad := range []runlet.Message{
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{Name: "x"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{Content: "x"}}},
		{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.ImagePart{}}},
		{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.FilePart{Name: "empty"}}},
	} {
		if _, err := m.buildRequest(&runlet.ModelRequest{Messages: []runlet.Message{bad}}, false); err == nil {
			t.Errorf("message %+v accepted", bad)
		}
	}
}

// Reasoning items are sent back only when the API will accept them: from
// this provider, with an ID, with encrypted content unless OpenAI stores
// items, and followed by this provider's function call.
func TestResponsesRequestReasoningReplay(t *testing.T) {
	rs := func(id, enc, text string) runlet.ReasoningPart {
		return runlet.ReasoningPart{ID: id, Encrypted: enc, Text: text, Provider: "openai"}
	}
	fc := func(n string) runlet.ToolCallPart {
		return runlet.ToolCallPart{ID: "call_" + n, Name: "f", Arguments: json.RawMessage(`{}`), ItemID: "fc_" + n, Provider: "openai"}
	}
	const (
		fc1      = `{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"}`
		fc1NoID  = `{"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}`
		fc2      = `{"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "f", "arguments": "{}"}`
		rs1      = `{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Thinking."}], "encrypted_content": "enc1"}`
		rs1Empty = `{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc1"}`
	)
	tests := []struct {
		name  string
		parts []runlet.Part
		store bool
		want  string
	}{
		{"before a call", []runlet.Part{rs("rs_1", "enc1", "Thinking."), fc("1")}, false, `[` + rs1 + `,` + fc1 + `]`},
		{"before parallel calls", []runlet.Part{rs("rs_1", "enc1", "Thinking."), fc("1"), fc("2")}, false, `[` + rs1 + `,` + fc1 + `,` + fc2 + `]`},
		{"without summary", []runlet.Part{rs("rs_1", "enc1", ""), fc("1")}, false, `[` + rs1Empty + `,` + fc1 + `]`},
		{"two reasoning items", []runlet.Part{rs("rs_0", "enc0", ""), rs("rs_1", "enc1", "Thinking."), fc("1")}, false,
			`[{"type": "reasoning", "id": "rs_0", "summary": [], "encrypted_content": "enc0"},` + rs1 + `,` + fc1 + `]`},
		{"no encrypted content, stateless", []runlet.Part{rs("rs_1", "", "Thinking."), fc("1")}, false, `[` + fc1NoID + `]`},
		{"no encrypted content, stored", []runlet.Part{rs("rs_1", "", "Thinking."), fc("1")}, true,
			`[{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Thinking."}]},` + fc1 + `]`},
		{"no ID", []runlet.Part{rs("", "enc1", "Thinking."), fc("1")}, false, `[` + fc1NoID + `]`},
		{"foreign reasoning", []runlet.Part{runlet.ReasoningPart{Text: "Hmm.", Signature: "sig", Provider: "anthropic"}, fc("1")}, false, `[` + fc1NoID + `]`},
		{"other OpenAI-compatible provider", []runlet.Part{runlet.ReasoningPart{ID: "rs_1", Encrypted: "enc1", Provider: "openrouter"}, fc("1")}, false, `[` + fc1NoID + `]`},
		{"followed by text", []runlet.Part{rs("rs_1", "enc1", "Thinking."), runlet.TextPart{Text: "Calling f."}, fc("1")}, false,
			`[{"type": "message", "role": "assistant", "content": "Calling f."},` + fc1NoID + `]`},
		{"before a final answer", []runlet.Part{rs("rs_1", "enc1", "Thinking."), runlet.TextPart{Text: "Done."}}, false,
			`[{"type": "message", "role": "assistant", "content": "Done."}]`},
		{"before a foreign call", []runlet.Part{rs("rs_1", "enc1", ""), runlet.ToolCallPart{ID: "toolu_1", Name: "f", Provider: "anthropic"}}, false,
			`[{"type": "function_call", "call_id": "toolu_1", "name": "f", "arguments": "{}"}]`},
		{"last part", []runlet.Part{fc("1"), rs("rs_1", "enc1", "")}, false, `[` + fc1NoID + `]`},
	}
	m := respModel("http://unused")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := respBody(t, m, &runlet.ModelRequest{
				Messages: []runlet.Message{{Role: runlet.RoleAssistant, Parts: tt.parts}},
				Options:  map[string]any{"store": tt.store},
			}, false)
			respWantJSON(t, "input", body["input"], tt.want)
		})
	}
}

func TestResponsesRequestPreviousResponseID(t *testing.T) {
	m := respModel("http://unused")
	history := []runlet.Message{
		runlet.UserText("Weather in Paris?"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{ID: "rs_1", Encrypted: "enc", Provider: "openai"},
			runlet.ToolCallPart{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), ItemID: "fc_1", Provider: "openai"},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call_1", Content: "18°C"}}},
	}
	body := respBody(t, m, &runlet.ModelRequest{Instructions: "Be brief.", Messages: history, Options: map[string]any{
		"previous_response_id": "resp_1", "reasoning": map[string]any{"effort": "low"},
	}}, false)
	respWantJSON(t, "body", body, `{"model": "gpt-test", "instructions": "Be brief.", "previous_response_id": "resp_1",
		"input": [{"type": "function_call_output", "call_id": "call_1", "output": "18°C"}],
		"reasoning": {"effort": "low"}, "store": true}`)

	// store false is honoured (the next response then cannot be chained).
	body = respBody(t, m, &runlet.ModelRequest{Messages: history, Options: map[string]any{"previous_response_id": "resp_1", "store": false}}, false)
	if body["store"] != false || len(body["input"].([]any)) != 1 {
		t.Errorf("body = %v", body)
	}

	// "auto" without a known response sends the full history, stored.
	body = respBody(t, m, &runlet.ModelRequest{Messages: history, Options: map[string]any{"previous_response_id": "auto"}}, false)
	if _, set := body["previous_response_id"]; set || body["store"] != true || len(body["input"].([]any)) != 4 {
		t.Errorf("auto, unknown: %v", body)
	}
	// Once the adapter has seen the response, it chains.
	m.chain.record("resp_1", history[1])
	body = respBody(t, m, &runlet.ModelRequest{Messages: history, Options: map[string]any{"previous_response_id": "auto"}}, false)
	if body["previous_response_id"] != "resp_1" || len(body["input"].([]any)) != 1 {
		t.Errorf("auto, known: %v", body)
	}
	// Only this provider's items count.
	other := NewResponses(Config{BaseURL: "http://unused", APIKey: "k", Model: "m", Name: "azure"})
	other.chain.record("resp_1", history[1])
	body = respBody(t, other, &runlet.ModelRequest{Messages: history, Options: map[string]any{"previous_response_id": "auto"}}, false)
	if _, set := body["previous_response_id"]; set {
		t.Errorf("chained on another provider's items: %v", body)
	}
}

func TestResponsesChainBounded(t *testing.T) {
	var c respChain
	for i := range respChainMax + 10 {
		c.record("resp", runlet.Message{Parts: []runlet.Part{runlet.ToolCallPart{ItemID: "fc_" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune(i)), Provider: "openai"}}})
	}
	if len(c.ids) > respChainMax || len(c.order) != respChainMax {
		t.Errorf("chain holds %d ids, %d keys", len(c.ids), len(c.order))
	}
}
