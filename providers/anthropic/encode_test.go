package anthropic

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet"
)

// encodeCases are requests covering every block kind, role merging, tool
// results sorted first, thinking replay (own, foreign, redacted), odd tool
// IDs, media, tools, tool choices, cache control, settings and options.
func encodeCases() []*runlet.ModelRequest {
	temp, topP, tiny := 0.25, 0.9, 1e-9
	nan := math.NaN()
	adaptive := map[string]any{"model": "claude-opus-4-6"} // takes adaptive thinking and effort
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"city": {Type: "string", Description: "<b>&</b>"}}, Required: []string{"city"}}
	history := []runlet.Message{
		runlet.UserText("Weather in <Shanghai> & \"Paris\"?\n\u2028 caf\u00e9 \xff"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "thinking…\n", Signature: "sig-r", Provider: "anthropic"},
			runlet.ReasoningPart{Text: "", Signature: "sig-empty", Provider: "anthropic"},
			runlet.ReasoningPart{Encrypted: "redacted==", Provider: "anthropic"},
			runlet.ReasoningPart{Text: "unsigned", Provider: "anthropic"},
			runlet.ReasoningPart{Text: "foreign", Signature: "x", Provider: "gemini"},
			runlet.TextPart{Text: "Let me check."},
			runlet.TextPart{Text: ""},
			runlet.ToolCallPart{ID: "call.1/x", Name: "get_weather", Arguments: json.RawMessage(` { "city" : "Shanghai" } `)},
			runlet.ToolCallPart{ID: "toolu_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			runlet.ToolCallPart{ID: "", Name: "", Arguments: json.RawMessage(`not json`)},
		}},
		{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.TextPart{Text: "text before results"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call.1/x", Content: "sunny"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "toolu_2", Content: "boom", IsError: true}, runlet.ToolResultPart{CallID: ""}}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: ""}}}, // dropped
		{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.TextPart{Text: "and this"},
			runlet.ImagePart{Data: []byte("\x89PNG\r\n\x1a\n....")},
			runlet.ImagePart{URL: "data:image/jpeg;base64,/9j/4AAQ"},
			runlet.ImagePart{URL: "https://example.test/cat.png"},
			runlet.FilePart{URL: "https://example.test/doc.pdf", MediaType: "application/pdf", Name: "doc"},
			runlet.FilePart{Data: []byte("plain <text>"), MediaType: "text/plain; charset=utf-8", Name: "t"},
			runlet.FilePart{Data: []byte("\x89PNG\r\n\x1a\n...."), MediaType: "image/png"},
			runlet.FilePart{Data: []byte("%PDF-1.4"), MediaType: "application/pdf"},
		}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.TextPart{Text: "last"},
			runlet.ReasoningPart{Text: "after", Signature: "s2", Provider: "anthropic"},
		}},
	}
	onlyThinking := append(append([]runlet.Message(nil), history[:2]...), runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{Encrypted: "r", Provider: "anthropic"}}})
	tools := []runlet.ToolSpec{{Name: "get_weather", Description: "Current <weather>.", InputSchema: schema}, {Name: "bare"}}
	return []*runlet.ModelRequest{
		{Messages: []runlet.Message{runlet.UserText("hi")}},
		{Messages: nil},
		{Instructions: "Be brief & <clear>.", Messages: history, Tools: tools},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceNone}, Options: map[string]any{"disable_parallel_tool_use": true}},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}, Options: map[string]any{"disable_parallel_tool_use": true}},
		{Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"}, Options: map[string]any{"disable_parallel_tool_use": true}},
		{Messages: history, Tools: tools, Options: map[string]any{"disable_parallel_tool_use": true}},
		{Messages: history, Options: map[string]any{"disable_parallel_tool_use": true}},
		{Instructions: "sys", Messages: history, Tools: tools, Options: map[string]any{"cache_control": true}},
		{Instructions: "sys", Messages: onlyThinking, Options: map[string]any{"cache_control": "1h"}},
		{Messages: history, Options: map[string]any{"cache_control": map[string]any{"type": "ephemeral", "ttl": "5m"}}},
		{Messages: history, Settings: runlet.Settings{Temperature: &temp, TopP: &topP, MaxOutputTokens: 100, StopSequences: []string{"END", "<x>"}}},
		{Messages: history, Settings: runlet.Settings{Temperature: &tiny, StopSequences: []string{}}},
		{Messages: history, OutputSchema: &runlet.OutputSchema{Name: "o", Schema: schema}},
		{Messages: history, OutputSchema: &runlet.OutputSchema{Name: "o", Schema: schema}, Options: map[string]any{"output_config": map[string]any{"effort": "low"}}},
		{Messages: history, Options: map[string]any{"output_config": map[string]any{}}},
		{Messages: history, Options: map[string]any{"model": "claude-opus-4-1", "max_tokens": 2048, "thinking": 4096, "betas": []string{"b1", "b2"}}},
		{Messages: history, Options: map[string]any{"thinking": "adaptive"}},
		{Messages: history, Options: map[string]any{"thinking": json.RawMessage(` {"type": "enabled", "budget_tokens": 9000} `)}},
		{Messages: history, Options: map[string]any{"thinking": map[string]any(nil)}},
		{Messages: history, Options: map[string]any{"metadata": map[string]any{"user_id": "<u>"}, "top_k": 5, "model": "m"}},
		{Messages: history, Options: map[string]any{"thinking": 0, "cache_control": false}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningMedium}}, Options: adaptive},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningLow, BudgetTokens: 8000, Summary: true}}, Options: adaptive},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningLow, BudgetTokens: 8000, Summary: true}}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Summary: true}}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh, Summary: true}},
			Options: map[string]any{"model": "claude-sonnet-4-6", "thinking": 2048, "output_config": map[string]any{"effort": "max"}}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh}}, Options: map[string]any{"thinking": nil}},
		// Invalid requests: the last seven.
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: "hihg"}}},
		{Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh}}, Options: map[string]any{"model": "claude-sonnet-4-5"}},
		{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.ImagePart{}}}}},
		{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.FilePart{URL: "data:bad", Name: "f"}}}}},
		{Messages: history, Tools: []runlet.ToolSpec{{Name: "bad", InputSchema: &jsonschema.Schema{Type: "object", Types: []string{"a"}}}}},
		{Messages: history, Tools: tools, Settings: runlet.Settings{Temperature: &nan}},
		{Messages: history, Options: map[string]any{"thinking": json.RawMessage(`{bad`)}},
	}
}

const invalidEncodeCases = 7

// The direct encoding equals marshalling the wire types, for every case,
// Generate and Stream, and a version without sampling settings, errors
// included.
func TestEncodeMatchesReference(t *testing.T) {
	for _, cfg := range []Config{{}, {Name: "custom"}, {Version: "2026-10-21"}, {MaxTokens: 1000}} {
		m := newTestModel("https://example.test", cfg)
		failed := 0
		for i, req := range encodeCases() {
			for _, stream := range []bool{false, true} {
				if !checkEncode(t, m, req, stream, i) {
					failed++
				}
			}
		}
		want := 2 * invalidEncodeCases
		if samplingRemoved(m.cfg.version) {
			want -= 2 // the NaN temperature is not sent
		}
		if failed != want {
			t.Errorf("%d builds failed, want %d", failed, want)
		}
	}
}

// checkEncode compares the two encodings of req, reporting whether it built.
func checkEncode(t *testing.T, m *Messages, req *runlet.ModelRequest, stream bool, i int) bool {
	t.Helper()
	got, err := m.buildRequest(req, stream)
	want, werr := m.referenceBuild(req, stream)
	if (err != nil) != (werr != nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("case %d: error %v, reference %v", i, err, werr)
	}
	if string(got.body) != string(want.body) || got.betas != want.betas || got.model != want.model {
		t.Fatalf("case %d:\n got %s %q %q\nwant %s %q %q", i, got.body, got.betas, got.model, want.body, want.betas, want.model)
	}
	return err == nil
}

// FuzzEncodeRequest builds requests from fuzzed strings and compares the
// direct encoding with the reference.
func FuzzEncodeRequest(f *testing.F) {
	f.Add("hello", "sig", "toolu_1", `{"a":1}`, "result", 0.5, uint8(0))
	f.Add("<&>\u2028\xff", "", "", ` [1] `, "", 1e-7, uint8(0xff))
	f.Add("", "s\"ig", "c\\1", `{"a": "\u00e9"}`, "\x00", -3e21, uint8(0x5a))
	f.Add("hello", "sig", "toolu_1", `{}`, "high", 0.5, uint8(0x42))
	m := newTestModel("https://example.test", Config{})
	f.Fuzz(func(t *testing.T, text, sig, id, args, result string, temp float64, flags uint8) {
		bit := func(n uint) bool { return flags&(1<<n) != 0 }
		provider := "anthropic"
		if bit(0) {
			provider = "other"
		}
		asst := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: text, Signature: sig, Provider: provider},
			runlet.ReasoningPart{Encrypted: sig, Provider: provider},
			runlet.TextPart{Text: text},
			runlet.ToolCallPart{ID: id, Name: text, Arguments: json.RawMessage(args)},
		}}
		if bit(1) {
			asst.Parts = asst.Parts[:2]
		}
		res := runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.TextPart{Text: result}, runlet.ToolResultPart{CallID: id, Content: result, IsError: bit(2)}}}
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText(text), asst, res}, Settings: runlet.Settings{Temperature: &temp}}
		if bit(3) {
			req.Messages = append(req.Messages, runlet.UserText(result))
		}
		if bit(4) {
			req.Instructions = text
		}
		if bit(5) {
			req.Tools = []runlet.ToolSpec{{Name: id, Description: text}}
			req.ToolChoice = runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: result}
		}
		if bit(6) {
			req.Options = map[string]any{"cache_control": sig, "stop": text}
			req.Reasoning = runlet.Reasoning{Effort: runlet.ReasoningEffort(result), BudgetTokens: len(text), Summary: bit(1)}
		}
		if bit(7) {
			req.Messages = append(req.Messages, runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.FilePart{URL: text, MediaType: sig, Data: []byte(result), Name: id}}})
		}
		checkEncode(t, m, req, bit(2), 0)
	})
}
