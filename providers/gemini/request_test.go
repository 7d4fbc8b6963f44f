package gemini

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet"
)

func build(t *testing.T, cfg Config, req *runlet.ModelRequest, stream bool) (string, []byte) {
	t.Helper()
	url, body, err := newTestModel("https://example.test/v1beta", cfg).buildRequest(req, stream)
	if err != nil {
		t.Fatal(err)
	}
	return url, body
}

// Requests built by the adapter match the ones recorded from real traffic
// (pydantic-ai's requests; fields pydantic-ai adds on its own, such as
// responseModalities, are left out of the comparison by building the same
// request here).
func TestRequestMatchesRecorded(t *testing.T) {
	noArgs := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, tc := range []struct {
		fixture string
		req     *runlet.ModelRequest
		drop    []string // recorded keys the adapter does not send
	}{
		{"pydantic-nonstream-system-instruction-thinking-config.request.json", &runlet.ModelRequest{
			Instructions: "You are a helpful chatbot.",
			Messages:     []runlet.Message{runlet.UserText("What is the capital of France?")},
			Options:      map[string]any{"include_thoughts": false},
		}, nil},
		{"pydantic-nonstream-response-json-schema.request.json", &runlet.ModelRequest{
			Messages: []runlet.Message{runlet.UserText("What is the largest city in Mexico?")},
			OutputSchema: &runlet.OutputSchema{Name: "CityLocation", Schema: &jsonschema.Schema{
				Title: "CityLocation", Description: "A city and its country.", Type: "object",
				Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}, "country": {Type: "string"}},
				Required:   []string{"city", "country"},
			}},
		}, []string{"responseModalities"}},
		{"pydantic-stream-tool-call-signature-gemini3.1.request.json", &runlet.ModelRequest{
			Messages: []runlet.Message{runlet.UserText("What is the capital of the user country? Call the tool")},
			Tools:    []runlet.ToolSpec{{Name: "get_country", InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}}},
		}, []string{"responseModalities"}},
		{"pydantic-nonstream-tool-config-any.request.json", &runlet.ModelRequest{
			Messages:   []runlet.Message{runlet.UserText("run bar for me please")},
			Tools:      []runlet.ToolSpec{{Name: "bar", InputSchema: noArgs}},
			ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "bar"},
		}, nil},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			_, body := build(t, Config{}, tc.req, false)
			var got, want map[string]any
			_ = json.Unmarshal(body, &got)
			if err := json.Unmarshal(fixture(t, tc.fixture), &want); err != nil {
				t.Fatal(err)
			}
			normalise(want, tc.drop)
			normalise(got, nil)
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if tc.fixture == "pydantic-nonstream-tool-config-any.request.json" {
				// Recorded with the old schema subset (parameters, OBJECT) and
				// two allowed functions; compare the parts the adapter owns.
				tc := got["toolConfig"].(map[string]any)["functionCallingConfig"].(map[string]any)
				if tc["mode"] != "ANY" || len(tc["allowedFunctionNames"].([]any)) != 1 {
					t.Errorf("toolConfig %s", gj)
				}
				return
			}
			if string(gj) != string(wj) {
				t.Errorf("request\n got %s\nwant %s", gj, wj)
			}
		})
	}
}

// normalise removes keys that name the same thing in two spellings
// (pydantic-ai's SDK wrote some in snake_case, which the API accepts) and
// the ones listed, and drops systemInstruction's role.
func normalise(v any, drop []string) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range drop {
			delete(v, k)
		}
		for k, x := range v {
			if x == "" { // description: "" means no description
				delete(v, k)
				continue
			}
			if strings.Contains(k, "_") {
				parts := strings.Split(k, "_")
				for i := 1; i < len(parts); i++ {
					parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
				}
				delete(v, k)
				v[strings.Join(parts, "")] = x
			}
			normalise(x, drop)
		}
		if si, ok := v["systemInstruction"].(map[string]any); ok {
			delete(si, "role")
		}
		if gc, ok := v["generationConfig"].(map[string]any); ok && len(gc) == 0 {
			delete(v, "generationConfig")
		}
	case []any:
		for _, x := range v {
			normalise(x, drop)
		}
	}
}

func TestRequestURLAndSettings(t *testing.T) {
	temp, topP := 0.2, 0.9
	req := &runlet.ModelRequest{
		Messages: []runlet.Message{runlet.UserText("hi")},
		Settings: runlet.Settings{Temperature: &temp, TopP: &topP, MaxOutputTokens: 100, StopSequences: []string{"END"}},
		Options: map[string]any{
			"thinking_budget": 1024, "thinking_level": "low", "include_thoughts": true,
			"generationConfig": map[string]any{"topK": 40, "seed": 7},
			"safetySettings":   []any{map[string]any{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}},
			"model":            "models/gemini-2.5-flash",
		},
	}
	url, body := build(t, Config{}, req, true)
	if url != "https://example.test/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" {
		t.Errorf("url %s", url)
	}
	want := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],
	"generationConfig":{"temperature":0.2,"topP":0.9,"maxOutputTokens":100,"stopSequences":["END"],"topK":40,"seed":7,
	"thinkingConfig":{"thinkingBudget":1024,"thinkingLevel":"low","includeThoughts":true}},
	"safetySettings":[{"category":"HARM_CATEGORY_HATE_SPEECH","threshold":"BLOCK_NONE"}]}`
	if !jsonEqual(t, body, []byte(want)) {
		t.Errorf("body %s", body)
	}
	url, _ = build(t, Config{}, &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}, false)
	if url != "https://example.test/v1beta/models/gemini-3-pro-preview:generateContent" {
		t.Errorf("url %s", url)
	}
}

func TestRequestToolChoices(t *testing.T) {
	for mode, want := range map[runlet.ToolChoiceMode]string{
		runlet.ToolChoiceAuto: `{"mode":"AUTO"}`, runlet.ToolChoiceNone: `{"mode":"NONE"}`,
		runlet.ToolChoiceRequired: `{"mode":"ANY"}`, runlet.ToolChoiceTool: `{"mode":"ANY","allowedFunctionNames":["f"]}`,
	} {
		_, body := build(t, Config{}, &runlet.ModelRequest{
			Messages: []runlet.Message{runlet.UserText("x")}, Tools: []runlet.ToolSpec{{Name: "f", Description: "d"}},
			ToolChoice: runlet.ToolChoice{Mode: mode, Name: "f"},
		}, false)
		var w struct {
			Tools      json.RawMessage
			ToolConfig struct{ FunctionCallingConfig json.RawMessage }
		}
		_ = json.Unmarshal(body, &w)
		if !jsonEqual(t, w.ToolConfig.FunctionCallingConfig, []byte(want)) || string(w.Tools) != `[{"functionDeclarations":[{"name":"f","description":"d"}]}]` {
			t.Errorf("%s: %s", mode, body)
		}
	}
}

// Signatures go back on the parts that carried them, only to the same
// adapter; foreign state is dropped, and a Gemini 3 turn whose first call
// has no signature gets the documented placeholder.
func TestRequestContinuationState(t *testing.T) {
	assistant := func(provider string) runlet.Message {
		return runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "hmm", Signature: "R1+/=", Provider: provider},
			runlet.ReasoningPart{Text: "unsigned", Provider: provider},
			runlet.TextPart{Text: "Let me look.", Signature: "T1+/=", Provider: provider},
			runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`), Signature: "C1+/=", Provider: provider},
			runlet.ToolCallPart{ID: "c2", Name: "f", Arguments: json.RawMessage(`not json`), Provider: provider},
		}}
	}
	results := runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{
		runlet.ToolResultPart{CallID: "c1", Content: "one"},
		runlet.ToolResultPart{CallID: "c2", Content: "boom", IsError: true},
	}}
	own := `[{"role":"user","parts":[{"text":"q"}]},
	{"role":"model","parts":[
		{"text":"hmm","thought":true,"thoughtSignature":"R1+/="},
		{"text":"Let me look.","thoughtSignature":"T1+/="},
		{"functionCall":{"id":"c1","name":"f","args":{"a":1}},"thoughtSignature":"C1+/="},
		{"functionCall":{"id":"c2","name":"f","args":{}}}]},
	{"role":"user","parts":[
		{"functionResponse":{"id":"c1","name":"f","response":{"output":"one"}}},
		{"functionResponse":{"id":"c2","name":"f","response":{"error":"boom"}}},
		{"text":"next"}]}]`
	foreign := strings.NewReplacer(`{"text":"hmm","thought":true,"thoughtSignature":"R1+/="},`, ``,
		`,"thoughtSignature":"T1+/="`, ``, `"thoughtSignature":"C1+/="`, `"thoughtSignature":"skip_thought_signature_validator"`).Replace(own)
	foreign25 := strings.Replace(foreign, `,"thoughtSignature":"skip_thought_signature_validator"`, ``, 1)
	for _, tc := range []struct {
		provider, model, want string
	}{{"gemini", "gemini-3-pro-preview", own}, {"anthropic", "gemini-3-pro-preview", foreign}, {"anthropic", "gemini-2.5-pro", foreign25}} {
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("q"), assistant(tc.provider), results, runlet.UserText("next")}}
		_, body := build(t, Config{Model: tc.model}, req, false)
		var w struct{ Contents json.RawMessage }
		_ = json.Unmarshal(body, &w)
		if !jsonEqual(t, w.Contents, []byte(tc.want)) {
			t.Errorf("%s/%s:\n got %s\nwant %s", tc.provider, tc.model, w.Contents, tc.want)
		}
	}
}

func TestRequestMedia(t *testing.T) {
	req := &runlet.ModelRequest{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{
		runlet.ImagePart{Data: []byte("\x89PNG\r\n\x1a\n")},
		runlet.ImagePart{URL: "data:image/jpeg;base64,/9j/"},
		runlet.FilePart{URL: "https://generativelanguage.googleapis.com/v1beta/files/abc", MediaType: "application/pdf"},
		runlet.FilePart{Data: []byte("hello"), MediaType: "text/plain; charset=utf-8"},
	}}}}
	_, body := build(t, Config{}, req, false)
	want := `{"contents":[{"role":"user","parts":[
		{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},
		{"inlineData":{"mimeType":"image/jpeg","data":"/9j/"}},
		{"fileData":{"mimeType":"application/pdf","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc"}},
		{"inlineData":{"mimeType":"text/plain","data":"aGVsbG8="}}]}]}`
	if !jsonEqual(t, body, []byte(want)) {
		t.Errorf("body %s", body)
	}
}

func TestRequestInvalid(t *testing.T) {
	m := newTestModel("https://example.test", Config{})
	for _, opts := range []map[string]any{
		{"thinking_budget": "x"}, {"thinking_level": 3}, {"include_thoughts": "yes"}, {"generationConfig": 1}, {"model": ""}, {"alt": "sse"},
	} {
		_, _, err := m.buildRequest(&runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Options: opts}, false)
		requireProviderError(t, err)
	}
	for _, p := range []runlet.Part{runlet.ImagePart{URL: "data:broken"}, runlet.FilePart{Name: "empty"}} {
		_, _, err := m.buildRequest(&runlet.ModelRequest{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{p}}}}, false)
		if !errors.Is(err, runlet.ErrInvalidRequest) {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if _, _, err := m.buildRequest(nil, false); err == nil {
		t.Error("nil request accepted")
	}
	noModel := New(Config{APIKey: "k"})
	if _, _, err := noModel.buildRequest(&runlet.ModelRequest{}, false); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("err %v", err)
	}
}

// The configured model's endpoints are made once; they equal the ones
// made per request for any other model.
func TestEndpointCached(t *testing.T) {
	for _, model := range []string{"gemini-3-pro-preview", "models/gemini-2.5-flash", "tuned/a b"} {
		m := newTestModel("https://example.test/v1beta", Config{Model: model})
		for _, stream := range []bool{false, true} {
			if got, want := m.cfg.endpoint(model, stream), m.cfg.makeEndpoint(model, stream); got != want {
				t.Errorf("%s (stream %v): %s, want %s", model, stream, got, want)
			}
		}
	}
	if m := newTestModel("https://example.test/v1beta", Config{Model: "gemini-3-pro-preview"}); m.cfg.endpoint("other", true) != "https://example.test/v1beta/models/other:streamGenerateContent?alt=sse" {
		t.Error(m.cfg.endpoint("other", true))
	}
}
