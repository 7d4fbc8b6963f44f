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

// The direct Responses request writer (responses_write.go) against the
// wire structs and encoding/json: the same bytes, or the same error, for
// every request.

func checkRespWrite(t testing.TB, m *Responses, req *runlet.ModelRequest) {
	t.Helper()
	for _, stream := range []bool{false, true} {
		got, gerr := m.build(req, stream, true)
		want, werr := m.build(req, stream, false)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("stream %v: error %v, reference %v", stream, gerr, werr)
		}
		if gerr != nil {
			continue
		}
		if !bytes.Equal(got.body, want.body) || got.store != want.store || got.auto != want.auto || got.model != want.model {
			t.Fatalf("stream %v:\n got %s\nwant %s", stream, got.body, want.body)
		}
	}
}

func TestRespWriteMatchesReference(t *testing.T) {
	temp, topP, tiny := 0.7, 1.0, 1e-9
	nan := math.NaN()
	loose := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string", Description: "x <b> & y"}}}
	const p = "openai"
	history := []runlet.Message{
		runlet.UserText("Weather in Shanghai? <b>&</b> \u2028 \x01 \"q\" \\ é 😀 \xff"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{ID: "rs_1", Text: "think", Encrypted: "enc", Provider: p},
			runlet.ReasoningPart{ID: "rs_2", Provider: p},
			runlet.ToolCallPart{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Shanghai"}`), ItemID: "fc_1", Provider: p},
			runlet.ReasoningPart{Text: "foreign", Provider: "other", ID: "x"},
			runlet.TextPart{Text: "Let me "}, runlet.TextPart{Text: "check."},
			runlet.ReasoningPart{ID: "rs_3", Encrypted: "e", Provider: p},
			runlet.TextPart{Text: "paired", ItemID: "msg_1", Provider: p},
			runlet.TextPart{Text: "after"},
			runlet.ToolCallPart{ID: "call_2", Name: "f"},
			runlet.ReasoningPart{ID: "rs_4", Text: "dangling", Encrypted: "e", Provider: p},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call_1", Content: "sunny\n"}, runlet.ToolResultPart{CallID: "call_2"}}},
		{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.TextPart{Text: "Look:"}, runlet.TextPart{},
			runlet.ImagePart{URL: "https://example.com/a.png", Detail: "high"},
			runlet.ImagePart{MediaType: "image/png", Data: []byte("\x89PNG")},
			runlet.ToolResultPart{CallID: "call_3", Content: "x"},
			runlet.FilePart{Name: "r.pdf", MediaType: "application/pdf", Data: []byte("%PDF")},
			runlet.FilePart{URL: "data:text/plain;base64,aGk="},
			runlet.FilePart{URL: "https://x/a.pdf"},
			runlet.ReasoningPart{Text: "ignored"},
		}},
		{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.TextPart{}}},
		{Role: runlet.RoleUser},
		{Role: "developer", Parts: []runlet.Part{runlet.TextPart{Text: "dev"}, runlet.ToolCallPart{ID: "x"}}},
		{Role: runlet.RoleAssistant},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: "a\xe6"}, runlet.TextPart{Text: "\x9d\xb1b"}}},
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{}, runlet.TextPart{}}},
	}
	tools := []runlet.ToolSpec{{Name: "get_weather", Description: "Weather for a city.", InputSchema: weatherSchema()}, {Name: "noargs"}, {Name: "loose", InputSchema: loose}}
	hi := []runlet.Message{runlet.UserText("hi")}
	cases := map[string]*runlet.ModelRequest{
		"minimal":      {Messages: hi},
		"instructions": {Instructions: "Be brief.", Messages: hi},
		"empty":        {},
		"full": {Instructions: "Be brief.", Messages: history, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"},
			OutputSchema: &runlet.OutputSchema{Name: "weather", Description: "A report.", Schema: weatherSchema(), Strict: true},
			Settings:     runlet.Settings{Temperature: &temp, TopP: &topP, MaxOutputTokens: 100, StopSequences: []string{"END"}}},
		"store":             {Messages: history, Options: map[string]any{"store": true, "include": []any{"a", "b"}, "strict": true, "model": "o3"}},
		"store false":       {Messages: history, Options: map[string]any{"store": false, "include": []string{}}},
		"previous":          {Messages: history, Options: map[string]any{"previous_response_id": "resp_1"}},
		"chain auto":        {Messages: history, Options: map[string]any{"previous_response_id": "auto"}},
		"floats":            {Messages: hi, Settings: runlet.Settings{Temperature: &tiny, MaxOutputTokens: -1}},
		"nan":               {Messages: hi, Settings: runlet.Settings{TopP: &nan}},
		"reasoning":         {Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningMedium, BudgetTokens: 9, Summary: true}}},
		"reasoning effort":  {Messages: hi, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningLow}}},
		"reasoning summary": {Messages: hi, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Summary: true}}},
		"reasoning typo":    {Messages: hi, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: "hihg"}}},
		"reasoning both":    {Messages: history, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh}}, Options: map[string]any{"reasoning": map[string]any{"effort": "low"}}},
		"choice":            {Messages: hi, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceNone}},
		"choice no name":    {Messages: hi, Tools: tools, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool}},
		"choice unknown":    {Messages: hi, ToolChoice: runlet.ToolChoice{Mode: "often"}},
		"tool no name":      {Messages: hi, Tools: []runlet.ToolSpec{{Description: "x"}}},
		"output no schema":  {Messages: hi, OutputSchema: &runlet.OutputSchema{Description: "free"}},
		"output loose":      {Messages: hi, OutputSchema: &runlet.OutputSchema{Schema: loose}},
		"image no data":     {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.TextPart{Text: "x"}, runlet.ImagePart{}, runlet.ToolResultPart{}}}}},
		"file no data":      {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.FilePart{Name: "x"}}}}},
		"result no id":      {Messages: []runlet.Message{{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{Content: "x"}, runlet.ImagePart{}}}}},
		"call no name":      {Messages: []runlet.Message{{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: "a"}, runlet.ToolCallPart{ID: "x"}}}}},
		// Options that reshape the body go through the structs either way.
		"reasoning option": {Messages: history, Options: map[string]any{"reasoning": map[string]any{"effort": "low"}}},
		"text option":      {Messages: hi, Options: map[string]any{"text": map[string]any{"verbosity": "low"}}},
		"tools option":     {Messages: hi, Options: map[string]any{"tools": []any{map[string]any{"type": "web_search"}}}},
		"bad option":       {Messages: hi, Options: map[string]any{"store": "yes"}},
	}
	m := NewResponses(Config{BaseURL: "https://api.openai.com/v1", APIKey: "k", Model: "gpt-4.1"})
	for name, req := range cases {
		t.Run(name, func(t *testing.T) { checkRespWrite(t, m, req) })
	}
}

// FuzzRespWrite: any text, in any part of a request, writes as the wire
// structs encode.
func FuzzRespWrite(f *testing.F) {
	f.Add("hello", "call", `{"a":1}`, 0.7, uint8(0))
	f.Add("\x00\x1f\"\\<>&\u2028\u2029\xff\xe6\x9d", "\xed\xa0\x80", "", 1e-7, uint8(7))
	f.Add("😀", "", " ", 2e21, uint8(255))
	f.Add("hi", "high", "", 0.5, uint8(64))
	m := NewResponses(Config{BaseURL: "http://x/v1", APIKey: "k", Model: "m"})
	f.Fuzz(func(t *testing.T, text, id, args string, temp float64, shape uint8) {
		const p = "openai"
		user := []runlet.Part{runlet.TextPart{Text: text}}
		if shape&1 != 0 {
			user = append(user, runlet.ImagePart{URL: text, Detail: id}, runlet.ToolResultPart{CallID: id, Content: args}, runlet.TextPart{Text: args})
		}
		asst := []runlet.Part{runlet.TextPart{Text: text}, runlet.ToolCallPart{ID: id, Name: text, Arguments: json.RawMessage(args)}}
		if shape&2 != 0 {
			asst = append(asst, runlet.ReasoningPart{ID: id, Text: args, Encrypted: text, Provider: p},
				runlet.TextPart{Text: args, ItemID: id, Provider: p}, runlet.TextPart{Text: text})
		}
		if shape&4 != 0 {
			asst = append(asst, runlet.ReasoningPart{ID: "r", Provider: p}, runlet.ToolCallPart{ID: "c", Name: "n", ItemID: id, Provider: p})
		}
		req := &runlet.ModelRequest{Instructions: text, Settings: runlet.Settings{Temperature: &temp},
			Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: user}, {Role: runlet.RoleAssistant, Parts: asst},
				{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: id, Content: args}}}},
			Tools: []runlet.ToolSpec{{Name: text, Description: args}}}
		if shape&8 != 0 {
			req.Options = map[string]any{"store": shape&16 != 0}
		}
		if shape&32 != 0 {
			req.OutputSchema = &runlet.OutputSchema{Name: id, Description: text, Schema: weatherSchema()}
		}
		if shape&64 != 0 {
			req.Reasoning = runlet.Reasoning{Effort: runlet.ReasoningEffort(id), Summary: shape&128 != 0}
		}
		checkRespWrite(t, m, req)
	})
}

// TestRespWriteAllocs: a request's body costs one allocation (the copy
// out of the pooled buffer).
func TestRespWriteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	m := NewResponses(Config{BaseURL: "http://x/v1", APIKey: "k", Model: "m"})
	req := &runlet.ModelRequest{Instructions: "Be brief.", Messages: []runlet.Message{
		runlet.UserText("Weather in Shanghai?"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Shanghai"}`), ItemID: "fc_1", Provider: "openai"}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call_1", Content: "sunny"}}},
	}, Tools: []runlet.ToolSpec{{Name: "get_weather", Description: "Weather for a city.", InputSchema: weatherSchema()}}}
	if _, err := m.buildRequest(req, false); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := m.buildRequest(req, true); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("%v allocations per request body, want 1", n)
	}
}
