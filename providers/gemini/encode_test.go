package gemini

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet"
)

// encodeCases are requests covering every part kind, role merging, thought
// signatures (own, foreign, missing on a Gemini 3 call), tool results
// named by an earlier call, media, tools, tool choices, generation config
// and options.
func encodeCases() []*runlet.ModelRequest {
	temp, topP := 0.25, 0.9
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"city": {Type: "string", Description: "<b>&</b>"}}, Required: []string{"city"}}
	history := []runlet.Message{
		runlet.UserText("Weather in <Shanghai> & \"Paris\"?\n\u2028 caf\u00e9 \xff"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "thinking…", Signature: "sig-r", Provider: "gemini"},
			runlet.ReasoningPart{Text: "unsigned"},
			runlet.ReasoningPart{Text: "foreign", Signature: "x", Provider: "anthropic"},
			runlet.TextPart{Text: "Let me check.", Signature: "sig-t", Provider: "gemini"},
			runlet.TextPart{Text: "", Signature: "sig-empty", Provider: "gemini"},
			runlet.TextPart{Text: ""},
			runlet.TextPart{Text: "foreign sig", Signature: "s", Provider: "openai"},
			runlet.ToolCallPart{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(` { "city" : "Shanghai" } `)},
			runlet.ToolCallPart{ID: "c2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), Signature: "sig-c2", Provider: "gemini"},
			runlet.ToolCallPart{ID: "", Name: "noid", Arguments: json.RawMessage(`not json`)},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c1", Content: "sunny"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c2", Content: "boom", IsError: true}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "zz", Content: "unknown call"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c1", Name: "named", Content: ""}}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: ""}}}, // dropped
		{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.TextPart{Text: "and this"},
			runlet.ImagePart{Data: []byte("\x89PNG\r\n\x1a\n....")},
			runlet.ImagePart{URL: "data:image/jpeg;base64,/9j/4AAQ"},
			runlet.FilePart{URL: "https://example.test/doc.pdf", MediaType: "application/pdf", Name: "doc"},
			runlet.FilePart{URL: "gs://bucket/x"},
			runlet.FilePart{Data: []byte("plain text"), MediaType: "text/plain; charset=utf-8", Name: "t"},
		}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "c1", Name: "again", Arguments: json.RawMessage(`{}`)}}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "c3", Name: "merged", Arguments: nil}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c1", Content: "latest call named again"}, runlet.ToolResultPart{CallID: "c3"}}},
	}
	tools := []runlet.ToolSpec{{Name: "get_weather", Description: "Current <weather>.", InputSchema: schema}, {Name: "bare"}}
	return []*runlet.ModelRequest{
		{Messages: []runlet.Message{runlet.UserText("hi")}},
		{Messages: nil},
		{Instructions: "Be brief & <clear>.", Messages: history, Tools: tools},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceNone}},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"}},
		{Messages: history, Settings: runlet.Settings{Temperature: &temp, TopP: &topP, MaxOutputTokens: 100, StopSequences: []string{"END", "<x>"}}},
		{Messages: history, Settings: runlet.Settings{StopSequences: []string{}}},
		{Messages: history, OutputSchema: &runlet.OutputSchema{Name: "o", Schema: schema}},
		{Messages: history, Options: map[string]any{"model": "gemini-2.5-flash"}},
		{Messages: history, Options: map[string]any{"model": "models/gemini-1.5-pro", "thinking_budget": 1024, "include_thoughts": true}},
		{Messages: history, Options: map[string]any{"thinking_level": "low", "generationConfig": map[string]any{"seed": 7, "temperature": nil}}},
		{Messages: history, Options: map[string]any{"generationConfig": map[string]any{}}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh, Summary: true}}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningLow, BudgetTokens: 512}}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningLow, Summary: true}},
			Options: map[string]any{"thinking_budget": 0, "include_thoughts": false}},
		{Messages: history, Options: map[string]any{"safetySettings": []any{map[string]any{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}}, "contents": nil}},
		{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.ImagePart{}}}}},
		{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.FilePart{URL: "data:bad", Name: "f"}}}}},
		{Messages: history, Options: map[string]any{"thinking_budget": "lots"}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: "hihg"}}},
		{Messages: history, Tools: []runlet.ToolSpec{{Name: "bad", InputSchema: &jsonschema.Schema{Type: "object", Types: []string{"a"}}}}},
	}
}

// The direct encoding equals marshalling the wire types, for every case
// and for Generate and Stream, errors included.
func TestEncodeMatchesReference(t *testing.T) {
	for _, name := range []string{"", "custom"} {
		m := newTestModel("https://example.test/v1beta", Config{Name: name})
		failed := 0
		for i, req := range encodeCases() {
			for _, stream := range []bool{false, true} {
				if !checkEncode(t, m, req, stream, i) {
					failed++
				}
			}
		}
		if failed != 2*5 { // the last five cases are invalid
			t.Errorf("%d builds failed, want 10", failed)
		}
	}
}

// checkEncode compares the two encodings of req, reporting whether it built.
func checkEncode(t *testing.T, m *Model, req *runlet.ModelRequest, stream bool, i int) bool {
	t.Helper()
	url, body, err := m.buildRequest(req, stream)
	wurl, wbody, werr := m.referenceBuild(req, stream)
	if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("case %d: error %v, reference %v", i, err, werr)
	}
	if url != wurl || string(body) != string(wbody) {
		t.Fatalf("case %d:\n got %s %s\nwant %s %s", i, url, body, wurl, wbody)
	}
	return err == nil
}

// FuzzEncodeRequest builds requests from fuzzed strings and compares the
// direct encoding with the reference.
func FuzzEncodeRequest(f *testing.F) {
	f.Add("hello", "sig", "c1", `{"a":1}`, "result", "gemini-3-pro-preview", uint8(0))
	f.Add("<&>\u2028\xff", "", "", ` [1] `, "", "gemini-2.0-flash", uint8(0xff))
	f.Add("", "s\"ig", "c\\1", `{"a": "\u00e9"}`, "\x00", "models/gemini-3", uint8(0x5a))
	f.Add("hello", "", "c1", `{}`, "medium", "gemini-3-flash", uint8(0x42))
	m := newTestModel("https://example.test/v1beta", Config{})
	f.Fuzz(func(t *testing.T, text, sig, id, args, result, model string, flags uint8) {
		bit := func(n uint) bool { return flags&(1<<n) != 0 }
		provider := "gemini"
		if bit(0) {
			provider = "other"
		}
		asst := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: text, Signature: sig, Provider: provider},
			runlet.TextPart{Text: text, Signature: sig, Provider: provider},
			runlet.ToolCallPart{ID: id, Name: text, Arguments: json.RawMessage(args), Signature: sig, Provider: provider},
		}}
		if bit(1) {
			asst.Parts = asst.Parts[2:]
		}
		res := runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: id, Content: result, IsError: bit(2)}}}
		if bit(3) {
			res.Role = runlet.RoleAssistant
		}
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText(text), asst, res, runlet.UserText(result)}, Options: map[string]any{"model": model}}
		if bit(4) {
			req.Instructions = text
		}
		if bit(5) {
			req.Tools = []runlet.ToolSpec{{Name: id, Description: text}}
			req.ToolChoice = runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: result}
		}
		if bit(6) {
			req.StopSequences = []string{text}
			req.Reasoning = runlet.Reasoning{Effort: runlet.ReasoningEffort(result), BudgetTokens: len(sig), Summary: bit(1)}
		}
		if bit(7) {
			req.Messages = append(req.Messages, runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.FilePart{URL: text, MediaType: sig, Data: []byte(result)}}})
		}
		checkEncode(t, m, req, bit(2), 0)
	})
}
