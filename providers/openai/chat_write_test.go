package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet"
)

// The direct request writer (chat_write.go) against the reference builder
// (wire structs and encoding/json, chat_request_ref_test.go): the same
// bytes, or the same error, for every request.

func checkChatWrite(t testing.TB, m *ChatCompletions, req *runlet.ModelRequest) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		got, gerr := m.build(req, stream)
		want, werr := m.buildRef(req, stream)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("stream %v: error %v, reference %v", stream, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if !bytes.Equal(got.body, want.body) || got.thinkTags != want.thinkTags || got.model != want.model {
			t.Fatalf("stream %v:\n got %s\nwant %s", stream, got.body, want.body)
		}
		if !json.Valid(got.body) {
			t.Fatalf("invalid JSON: %s", got.body)
		}
	}
}

func TestChatWriteMatchesReference(t *testing.T) {
	temp, topP, tiny, huge := 0.7, 1.0, 1e-9, 3e21
	nan, inf := math.NaN(), math.Inf(1)
	loose := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string", Description: "x <b> & y"}}}
	history := []runlet.Message{
		runlet.UserText("Weather in Shanghai? <b>&</b> \u2028 \x01 \"q\" \\ é 😀 \xff"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "think", Provider: "deepseek", Details: `[ {"type":"reasoning.text", "text":"t"} ]`},
			runlet.ReasoningPart{Text: " more", Provider: "deepseek", Details: `[{"type":"reasoning.encrypted","data":"d"}]`},
			runlet.ReasoningPart{Text: "foreign", Provider: "other"},
			runlet.TextPart{Text: "Let me check. "}, runlet.TextPart{Text: "Now."},
			runlet.ToolCallPart{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Shanghai"}`)},
			runlet.ToolCallPart{ID: "call_2", Name: "f", Arguments: json.RawMessage(" "), Signature: "sig", Provider: "deepseek"},
			runlet.ToolCallPart{ID: "call_3", Name: "g", Signature: "sig", Provider: "other"},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call_1", Content: "sunny\n"}, runlet.ToolResultPart{Content: ""}}},
		{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.ToolResultPart{CallID: "call_2", Content: "ok"},
			runlet.TextPart{Text: "Look:"}, runlet.TextPart{},
			runlet.ImagePart{URL: "https://example.com/a.png", Detail: "high"},
			runlet.ImagePart{MediaType: "image/png", Data: []byte("\x89PNG")},
			runlet.FilePart{Name: "a.wav", MediaType: "audio/wav", Data: []byte("RIFF")},
			runlet.FilePart{MediaType: "audio/mpeg", Data: []byte("ID3")},
			runlet.FilePart{Name: "r.pdf", MediaType: "application/pdf", Data: []byte("%PDF")},
			runlet.FilePart{URL: "data:text/plain;base64,aGk="},
		}},
		{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call_3", Content: "x"}}},
		{Role: runlet.RoleUser},
		{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.TextPart{}}},
		{Role: runlet.RoleAssistant},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: "a\xe6"}, runlet.TextPart{Text: "\x9d\xb1b"}}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: "only \xff"}}},
	}
	tools := []runlet.ToolSpec{{Name: "get_weather", Description: "Weather for a city.", InputSchema: weatherSchema()}, {Name: "noargs"}, {Name: "loose", InputSchema: loose}}
	cases := map[string]*runlet.ModelRequest{
		"minimal":           {Messages: []runlet.Message{runlet.UserText("hi")}},
		"instructions":      {Instructions: "Be brief.", Messages: []runlet.Message{runlet.UserText("hi")}},
		"instructions only": {Instructions: "Be brief."},
		"full": {Instructions: "Be brief.", Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"},
			OutputSchema: &runlet.OutputSchema{Name: "weather", Description: "A report.", Schema: weatherSchema(), Strict: true},
			Settings:     runlet.Settings{Temperature: &temp, TopP: &topP, MaxOutputTokens: 100, StopSequences: []string{"\n\n", "END"}}},
		"floats":           {Messages: []runlet.Message{runlet.UserText("hi")}, Settings: runlet.Settings{Temperature: &tiny, TopP: &huge}},
		"nan":              {Messages: []runlet.Message{runlet.UserText("hi")}, Settings: runlet.Settings{Temperature: &nan}},
		"inf":              {Messages: []runlet.Message{runlet.UserText("hi")}, Settings: runlet.Settings{TopP: &inf}},
		"choice auto":      {Messages: []runlet.Message{runlet.UserText("hi")}, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}},
		"choice no name":   {Messages: []runlet.Message{runlet.UserText("hi")}, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool}},
		"choice unknown":   {Messages: []runlet.Message{runlet.UserText("hi")}, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: "sometimes"}},
		"choice no tools":  {Messages: []runlet.Message{runlet.UserText("hi")}, ToolChoice: runlet.ToolChoice{Mode: "sometimes"}},
		"output no schema": {Messages: []runlet.Message{runlet.UserText("hi")}, OutputSchema: &runlet.OutputSchema{Description: "free"}},
		"output loose":     {Messages: []runlet.Message{runlet.UserText("hi")}, OutputSchema: &runlet.OutputSchema{Schema: loose}},
		"no messages":      {},
		"unknown role":     {Messages: []runlet.Message{{Role: "system", Parts: []runlet.Part{runlet.TextPart{Text: "x"}}}}},
		"user reasoning":   {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.ImagePart{}, runlet.ReasoningPart{Text: "x"}}}}},
		"user call":        {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.ToolCallPart{ID: "x"}}}}},
		"file by URL":      {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.FilePart{Name: "a.pdf", URL: "https://x/a.pdf"}}}}},
		"assistant result": {Messages: []runlet.Message{{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "x"}}}}},
		"assistant image":  {Messages: []runlet.Message{{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ImagePart{URL: "x"}}}}},
		"tool text":        {Messages: []runlet.Message{{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.TextPart{Text: "x"}}}}},
		"options": {Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}, Settings: runlet.Settings{Temperature: &temp, MaxOutputTokens: 5,
			StopSequences: []string{"x"}}, OutputSchema: &runlet.OutputSchema{Schema: weatherSchema()},
			Options: map[string]any{"model": "other", "strict": true, "think_tags": true, "max_tokens_field": "max_completion_tokens",
				"instructions_role": "developer", "send_reasoning": "reasoning", "seed": 7, "top_k": 40, "tools": nil, "tool_choice": "none",
				"temperature": nil, "stop": []string{"<"}, "max_completion_tokens": 9, "response_format": map[string]any{"type": "json_object"},
				"stream_options": map[string]any{"include_usage": false}, "x<&>": "a<b>", "top_p": 0.5}},
		"send reasoning": {Messages: history, Options: map[string]any{"send_reasoning": true}},
		"reasoning no calls": {Messages: []runlet.Message{{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{Text: "r", Provider: "deepseek"}, runlet.TextPart{Text: "a"}}},
			{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{Provider: "deepseek"}}}}, Options: map[string]any{"send_reasoning": "reasoning_content"}},
		"reasoning":        {Messages: []runlet.Message{runlet.UserText("hi")}, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh, BudgetTokens: 2048, Summary: true}}},
		"reasoning option": {Messages: []runlet.Message{runlet.UserText("hi")}, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh}}, Options: map[string]any{"reasoning_effort": "minimal"}},
		"reasoning typo":   {Messages: []runlet.Message{runlet.UserText("hi")}, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: "hihg"}}},
		"bad option":       {Messages: []runlet.Message{runlet.UserText("hi")}, Options: map[string]any{"strict": "yes"}},
		"option stream":    {Messages: []runlet.Message{runlet.UserText("hi")}, Options: map[string]any{"stream": true}},
		"option bad json":  {Messages: []runlet.Message{runlet.UserText("hi")}, Options: map[string]any{"x": make(chan int)}},
	}
	for _, name := range []string{"deepseek", "openai"} {
		m := NewChatCompletions(Config{Name: name, BaseURL: "https://api.openai.com/v1", APIKey: "k", Model: "gpt-4o-mini"})
		for cname, req := range cases {
			t.Run(name+"/"+cname, func(t *testing.T) { checkChatWrite(t, m, req) })
		}
	}
}

// FuzzChatWrite: any text, in any part of a request, writes as the
// reference builder writes it.
func FuzzChatWrite(f *testing.F) {
	f.Add("hello", "call", `{"a":1}`, 0.7, uint8(0))
	f.Add("\x00\x1f\"\\<>&\u2028\u2029\xff\xe6\x9d", "\xed\xa0\x80", " \t\n", 1e-7, uint8(3))
	f.Add("😀", "", "", 2e21, uint8(255))
	f.Add("hi", "medium", "", 0.5, uint8(64))
	m := NewChatCompletions(Config{Name: "deepseek", BaseURL: "http://x/v1", APIKey: "k", Model: "m"})
	f.Fuzz(func(t *testing.T, text, id, args string, temp float64, shape uint8) {
		parts := []runlet.Part{runlet.TextPart{Text: text}}
		if shape&1 != 0 {
			parts = append(parts, runlet.TextPart{Text: id})
		}
		if shape&2 != 0 {
			parts = append(parts, runlet.ImagePart{URL: text, Detail: id})
		}
		asst := []runlet.Part{runlet.TextPart{Text: text}, runlet.ToolCallPart{ID: id, Name: text, Arguments: json.RawMessage(args), Signature: id, Provider: "deepseek"}}
		if shape&4 != 0 {
			asst = append(asst, runlet.TextPart{Text: args}, runlet.ReasoningPart{Text: args, Provider: "deepseek", Details: args})
		}
		req := &runlet.ModelRequest{Instructions: text, Settings: runlet.Settings{Temperature: &temp, StopSequences: []string{id}},
			Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: parts}, {Role: runlet.RoleAssistant, Parts: asst},
				{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: id, Content: args}}}},
			Tools: []runlet.ToolSpec{{Name: text, Description: args}}}
		if shape&8 != 0 {
			req.Options = map[string]any{text: args, "send_reasoning": shape&16 != 0}
		}
		if shape&32 != 0 {
			req.OutputSchema = &runlet.OutputSchema{Name: id, Description: text}
		}
		if shape&64 != 0 {
			req.Reasoning = runlet.Reasoning{Effort: runlet.ReasoningEffort(id), Summary: shape&128 != 0}
		}
		checkChatWrite(t, m, req)
	})
}

// TestChatWriteAllocs: a request's body costs one allocation (the copy
// out of the pooled buffer) plus the pass-through options' encoding.
func TestChatWriteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	m := NewChatCompletions(Config{BaseURL: "http://x/v1", APIKey: "k", Model: "m"})
	req := &runlet.ModelRequest{Instructions: "Be brief.", Messages: []runlet.Message{
		runlet.UserText("Weather in Shanghai?"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Shanghai"}`)}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call_1", Content: "sunny"}}},
	}, Tools: []runlet.ToolSpec{{Name: "get_weather", Description: "Weather for a city.", InputSchema: weatherSchema()}}}
	if _, err := m.build(req, false); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := m.build(req, true); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("%v allocations per request body, want 1", n)
	}
}
