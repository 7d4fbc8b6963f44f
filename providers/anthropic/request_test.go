package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet"
)

// build translates req with an adapter configured by cfg and returns the
// body's top-level fields.
func build(t *testing.T, cfg Config, req *runlet.ModelRequest, stream bool) (map[string]json.RawMessage, built) {
	t.Helper()
	m := newTestModel("http://127.0.0.1:1", cfg)
	b, err := m.buildRequest(req, stream)
	if err != nil {
		t.Fatalf("buildRequest: %v", err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b.body, &body); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, b.body)
	}
	return body, b
}

// field checks one top-level field against want (JSON; "" means absent).
func field(t *testing.T, body map[string]json.RawMessage, key, want string) {
	t.Helper()
	got, ok := body[key]
	if want == "" {
		if ok {
			t.Errorf("%s = %s, want absent", key, got)
		}
		return
	}
	if !ok {
		t.Errorf("%s absent, want %s", key, want)
		return
	}
	if !jsonEqual(t, got, []byte(want)) {
		t.Errorf("%s =\n  %s\nwant\n  %s", key, got, want)
	}
}

func float(f float64) *float64 { return &f }

func TestRequestBasics(t *testing.T) {
	body, _ := build(t, Config{}, &runlet.ModelRequest{
		Instructions: "Be brief.",
		Messages:     []runlet.Message{runlet.UserText("Hi <there> & you")},
	}, false)
	field(t, body, "model", `"claude-test"`)
	field(t, body, "max_tokens", `4096`)
	field(t, body, "system", `"Be brief."`)
	field(t, body, "messages", `[{"role":"user","content":[{"type":"text","text":"Hi <there> & you"}]}]`)
	field(t, body, "stream", "")
	field(t, body, "tools", "")
	field(t, body, "tool_choice", "")
	field(t, body, "temperature", "")
	field(t, body, "thinking", "")

	// No HTML escaping: text goes out as written.
	_, b := build(t, Config{}, userRequest("a<b>&c"), true)
	if !strings.Contains(string(b.body), `"a<b>&c"`) {
		t.Errorf("text was escaped: %s", b.body)
	}
	body, _ = build(t, Config{}, userRequest("x"), true)
	field(t, body, "stream", `true`)
	field(t, body, "system", "")
}

func TestRequestSettings(t *testing.T) {
	req := userRequest("x")
	req.Settings = runlet.Settings{Temperature: float(0.2), TopP: float(0.9), MaxOutputTokens: 123, StopSequences: []string{"END"}}
	body, _ := build(t, Config{}, req, false)
	field(t, body, "temperature", `0.2`)
	field(t, body, "top_p", `0.9`)
	field(t, body, "max_tokens", `123`)
	field(t, body, "stop_sequences", `["END"]`)

	// API versions from 2026-10-21 reject sampling parameters.
	body, _ = build(t, Config{Version: "2026-10-21"}, req, false)
	field(t, body, "temperature", "")
	field(t, body, "top_p", "")
	field(t, body, "max_tokens", `123`)
	// ... unless the caller insists through options.
	req.Options = map[string]any{"temperature": 0.5, "top_k": 5}
	body, _ = build(t, Config{Version: "2026-10-21"}, req, false)
	field(t, body, "temperature", `0.5`)
	field(t, body, "top_k", `5`)
}

func TestRequestMaxTokens(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		settings int
		options  map[string]any
		want     string
	}{
		{"default", Config{}, 0, nil, "4096"},
		{"config", Config{MaxTokens: 1000}, 0, nil, "1000"},
		{"settings", Config{MaxTokens: 1000}, 200, nil, "200"},
		{"option", Config{MaxTokens: 1000}, 200, map[string]any{"max_tokens": 300}, "300"},
		{"option float", Config{}, 0, map[string]any{"max_tokens": 300.0}, "300"},
		{"option json.Number", Config{}, 0, map[string]any{"max_tokens": json.Number("301")}, "301"},
		{"thinking raises default", Config{}, 0, map[string]any{"thinking": 8000}, "12096"},
		{"thinking below default", Config{}, 0, map[string]any{"thinking": 1024}, "4096"},
		{"thinking keeps configured", Config{MaxTokens: 2000}, 0, map[string]any{"thinking": 8000}, "2000"},
		{"thinking keeps settings", Config{}, 5000, map[string]any{"thinking": 8000}, "5000"},
		{"thinking object", Config{}, 0, map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 5000}}, "9096"},
		{"thinking raw JSON", Config{}, 0, map[string]any{"thinking": json.RawMessage(`{"type":"enabled","budget_tokens":5000}`)}, "9096"},
		{"adaptive thinking", Config{}, 0, map[string]any{"thinking": "adaptive"}, "4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := userRequest("x")
			req.MaxOutputTokens = tt.settings
			req.Options = tt.options
			body, _ := build(t, tt.cfg, req, false)
			field(t, body, "max_tokens", tt.want)
		})
	}
}

func TestRequestOptions(t *testing.T) {
	req := userRequest("x")
	req.Settings.StopSequences = []string{"A"}
	req.Options = map[string]any{
		"model":          "claude-other",
		"thinking":       2048,
		"top_k":          40,
		"stop_sequences": []string{"B", "C"},
		"metadata":       map[string]any{"user_id": "u-1"},
		"service_tier":   "standard_only",
		"container":      "ctr_1", // unknown to the adapter: passed through
		"future_field":   map[string]any{"nested": []int{1, 2}},
	}
	body, b := build(t, Config{}, req, false)
	field(t, body, "model", `"claude-other"`)
	field(t, body, "thinking", `{"type":"enabled","budget_tokens":2048}`)
	field(t, body, "top_k", `40`)
	field(t, body, "stop_sequences", `["B","C"]`)
	field(t, body, "metadata", `{"user_id":"u-1"}`)
	field(t, body, "service_tier", `"standard_only"`)
	field(t, body, "container", `"ctr_1"`)
	field(t, body, "future_field", `{"nested":[1,2]}`)
	if b.betas != "" {
		t.Errorf("betas = %q", b.betas)
	}

	// Thinking shorthands.
	for in, want := range map[any]string{
		"adaptive": `{"type":"adaptive"}`,
		0:          "",
		false:      "",
		"":         "",
	} {
		req := userRequest("x")
		req.Options = map[string]any{"thinking": in}
		body, _ := build(t, Config{}, req, false)
		field(t, body, "thinking", want)
	}

	// A nil option removes a field the adapter wrote; a known field can be replaced.
	req = userRequest("x")
	req.Settings.Temperature = float(1)
	req.Options = map[string]any{"temperature": nil, "system": []any{map[string]any{"type": "text", "text": "raw"}}}
	body, _ = build(t, Config{}, req, false)
	field(t, body, "temperature", "")
	field(t, body, "system", `[{"type":"text","text":"raw"}]`)

	// betas go to the header, not the body.
	req = userRequest("x")
	req.Options = map[string]any{"betas": []any{"b-1", "b-2"}}
	body, b = build(t, Config{}, req, false)
	field(t, body, "betas", "")
	if b.betas != "b-1,b-2" {
		t.Errorf("betas = %q", b.betas)
	}
}

func TestRequestOptionErrors(t *testing.T) {
	for name, opts := range map[string]map[string]any{
		"model type":      {"model": 3},
		"max_tokens type": {"max_tokens": "many"},
		"max_tokens zero": {"max_tokens": 0},
		"max_tokens frac": {"max_tokens": 1.5},
		"thinking type":   {"thinking": []int{1}},
		"thinking true":   {"thinking": true},
		"thinking neg":    {"thinking": -1},
		"cache_control":   {"cache_control": 5},
		"betas":           {"betas": 5},
		"betas elem":      {"betas": []any{1}},
		"parallel":        {"disable_parallel_tool_use": "yes"},
		"output_config":   {"output_config": "x"},
		"stream":          {"stream": false},
		"unencodable":     {"x": make(chan int)},
	} {
		t.Run(name, func(t *testing.T) {
			req := userRequest("x")
			req.Options = opts
			m := newTestModel("http://127.0.0.1:1", Config{})
			_, err := m.buildRequest(req, false)
			perr := requireProviderError(t, err)
			if perr.Retryable {
				t.Error("an invalid request is not retryable")
			}
		})
	}
	m := newTestModel("http://127.0.0.1:1", Config{})
	m.cfg.model = ""
	_, err := m.buildRequest(userRequest("x"), false)
	if perr := requireProviderError(t, err); !strings.Contains(perr.Message, "no model") {
		t.Errorf("err = %v", err)
	}
}

func TestRequestMessages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n0000")
	pdf := []byte("%PDF-1.4 test")
	tests := []struct {
		name string
		msgs []runlet.Message
		want string
	}{
		{
			name: "merge same roles",
			msgs: []runlet.Message{runlet.UserText("a"), runlet.UserText("b"), runlet.AssistantText("c"), runlet.AssistantText("d")},
			want: `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
				{"role":"assistant","content":[{"type":"text","text":"c"},{"type":"text","text":"d"}]}]`,
		},
		{
			name: "tool round trip",
			msgs: []runlet.Message{
				runlet.UserText("weather?"),
				{Role: runlet.RoleAssistant, Parts: []runlet.Part{
					runlet.TextPart{Text: "Checking."},
					runlet.ToolCallPart{ID: "toolu_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
					runlet.ToolCallPart{ID: "toolu_2", Name: "time", Arguments: nil},
				}},
				{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "toolu_1", Content: "sunny"}}},
				{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "toolu_2", Content: "boom", IsError: true}}},
				runlet.UserText("and tomorrow?"),
			},
			want: `[{"role":"user","content":[{"type":"text","text":"weather?"}]},
				{"role":"assistant","content":[{"type":"text","text":"Checking."},
					{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}},
					{"type":"tool_use","id":"toolu_2","name":"time","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"},
					{"type":"tool_result","tool_use_id":"toolu_2","content":"boom","is_error":true},
					{"type":"text","text":"and tomorrow?"}]}]`,
		},
		{
			name: "tool results first in a merged user message",
			msgs: []runlet.Message{
				{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "t1", Name: "f", Arguments: json.RawMessage(`{}`)}}},
				runlet.UserText("note"),
				{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "t1", Content: ""}}},
			},
			want: `[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"text","text":"note"}]}]`,
		},
		{
			name: "invalid arguments and foreign IDs",
			msgs: []runlet.Message{
				{Role: runlet.RoleAssistant, Parts: []runlet.Part{
					runlet.ToolCallPart{ID: "call:abc.1", Name: "f", Arguments: json.RawMessage(`{"cut":"of`)},
					runlet.ToolCallPart{ID: "call_2", Name: "g", Arguments: json.RawMessage(`[1]`)},
					runlet.ToolCallPart{ID: "call_3", Name: "h", Arguments: json.RawMessage(` {"a": 1} `)},
				}},
				{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call:abc.1", Content: "ok"}}},
			},
			want: `[{"role":"assistant","content":[{"type":"tool_use","id":"call_abc_1","name":"f","input":{}},
					{"type":"tool_use","id":"call_2","name":"g","input":{}},
					{"type":"tool_use","id":"call_3","name":"h","input":{"a":1}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_abc_1","content":"ok"}]}]`,
		},
		{
			name: "empty text and empty messages dropped",
			msgs: []runlet.Message{
				runlet.UserText("a"),
				{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: ""}}},
				{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ReasoningPart{Text: "foreign", Signature: "sig", Provider: "openai"}}},
				runlet.UserText("b"),
			},
			want: `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`,
		},
		{
			name: "images",
			msgs: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{
				runlet.ImagePart{Data: png},
				runlet.ImagePart{Data: png, MediaType: "image/webp"},
				runlet.ImagePart{URL: "https://example.com/cat.jpg", Detail: "high"},
				runlet.ImagePart{URL: "data:image/gif;base64,R0lGODlh"},
				runlet.FilePart{MediaType: "image/jpeg", URL: "https://example.com/dog.jpg"},
			}}},
			want: `[{"role":"user","content":[
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgowMDAw"}},
				{"type":"image","source":{"type":"base64","media_type":"image/webp","data":"iVBORw0KGgowMDAw"}},
				{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},
				{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGODlh"}},
				{"type":"image","source":{"type":"url","url":"https://example.com/dog.jpg"}}]}]`,
		},
		{
			name: "documents",
			msgs: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{
				runlet.FilePart{Name: "report.pdf", MediaType: "application/pdf", Data: pdf},
				runlet.FilePart{Data: pdf},
				runlet.FilePart{Name: "notes", MediaType: "text/plain; charset=utf-8", Data: []byte("hello")},
				runlet.FilePart{URL: "https://example.com/a.pdf"},
				runlet.FilePart{URL: "data:text/plain,hi%20there"},
			}}},
			want: `[{"role":"user","content":[
				{"type":"document","title":"report.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQgdGVzdA=="}},
				{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQgdGVzdA=="}},
				{"type":"document","title":"notes","source":{"type":"text","media_type":"text/plain","data":"hello"}},
				{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}},
				{"type":"document","source":{"type":"text","media_type":"text/plain","data":"hi there"}}]}]`,
		},
		{
			name: "reasoning sent back only to its provider",
			msgs: []runlet.Message{
				runlet.UserText("q"),
				{Role: runlet.RoleAssistant, Parts: []runlet.Part{
					runlet.ReasoningPart{Text: "mine", Signature: "sig-1", Provider: "anthropic"},
					runlet.ReasoningPart{Encrypted: "redacted-data", Provider: "anthropic"},
					runlet.ReasoningPart{Text: "", Signature: "sig-empty", Provider: "anthropic"},
					runlet.ReasoningPart{Text: "no signature", Provider: "anthropic"},
					runlet.ReasoningPart{Text: "theirs", Signature: "sig-2", Provider: "openai"},
					runlet.ReasoningPart{Text: "unlabelled", Signature: "sig-3"},
					runlet.ReasoningPart{Encrypted: "enc", Provider: "openai"},
					runlet.TextPart{Text: "answer"},
				}},
			},
			want: `[{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[
					{"type":"thinking","thinking":"mine","signature":"sig-1"},
					{"type":"redacted_thinking","data":"redacted-data"},
					{"type":"thinking","thinking":"","signature":"sig-empty"},
					{"type":"text","text":"answer"}]}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := build(t, Config{}, &runlet.ModelRequest{Messages: tt.msgs}, false)
			field(t, body, "messages", tt.want)
		})
	}
}

func TestRequestReasoningCustomName(t *testing.T) {
	msgs := []runlet.Message{
		runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "a", Signature: "s1", Provider: "anthropic"},
			runlet.ReasoningPart{Text: "b", Signature: "s2", Provider: "proxy"},
			runlet.TextPart{Text: "t"},
		}},
	}
	body, _ := build(t, Config{Name: "proxy"}, &runlet.ModelRequest{Messages: msgs}, false)
	field(t, body, "messages", `[{"role":"user","content":[{"type":"text","text":"q"}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"b","signature":"s2"},{"type":"text","text":"t"}]}]`)
}

func TestRequestTools(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}}, Required: []string{"city"}}
	tools := []runlet.ToolSpec{
		{Name: "weather", Description: "Get the weather.", InputSchema: schema},
		{Name: "now"},
	}
	wantTools := `[{"name":"weather","description":"Get the weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
		{"name":"now","input_schema":{"type":"object","properties":{}}}]`
	tests := []struct {
		choice   runlet.ToolChoice
		parallel any
		want     string
	}{
		{runlet.ToolChoice{}, nil, ""},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceAuto}, nil, `{"type":"auto"}`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}, nil, `{"type":"any"}`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "now"}, nil, `{"type":"tool","name":"now"}`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceNone}, nil, `{"type":"none"}`},
		{runlet.ToolChoice{}, true, `{"type":"auto","disable_parallel_tool_use":true}`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}, true, `{"type":"any","disable_parallel_tool_use":true}`},
		{runlet.ToolChoice{Mode: runlet.ToolChoiceNone}, true, `{"type":"none"}`},
		{runlet.ToolChoice{}, false, ""},
	}
	for _, tt := range tests {
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Tools: tools, ToolChoice: tt.choice}
		if tt.parallel != nil {
			req.Options = map[string]any{"disable_parallel_tool_use": tt.parallel}
		}
		body, _ := build(t, Config{}, req, false)
		field(t, body, "tools", wantTools)
		field(t, body, "tool_choice", tt.want)
	}
	// No tools: no tool_choice either.
	req := userRequest("x")
	req.ToolChoice = runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}
	body, _ := build(t, Config{}, req, false)
	field(t, body, "tools", "")
	field(t, body, "tool_choice", "")
}

func TestRequestCacheControl(t *testing.T) {
	req := &runlet.ModelRequest{
		Instructions: "sys",
		Tools:        []runlet.ToolSpec{{Name: "a"}, {Name: "b"}},
		Messages: []runlet.Message{
			runlet.UserText("first"),
			{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "t1", Name: "a", Arguments: json.RawMessage(`{}`)}}},
			{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "t1", Content: "r"}}},
		},
	}
	for in, cc := range map[any]string{
		true: `{"type":"ephemeral"}`,
		"1h": `{"type":"ephemeral","ttl":"1h"}`,
		"":   `{"type":"ephemeral"}`,
	} {
		req.Options = map[string]any{"cache_control": in}
		body, _ := build(t, Config{}, req, false)
		field(t, body, "cache_control", "") // placed on blocks, not top level
		field(t, body, "system", `[{"type":"text","text":"sys","cache_control":`+cc+`}]`)
		field(t, body, "tools", `[{"name":"a","input_schema":{"type":"object","properties":{}}},
			{"name":"b","input_schema":{"type":"object","properties":{}},"cache_control":`+cc+`}]`)
		field(t, body, "messages", `[{"role":"user","content":[{"type":"text","text":"first"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r","cache_control":`+cc+`}]}]`)
	}
	req.Options = map[string]any{"cache_control": map[string]any{"type": "ephemeral", "ttl": "5m"}}
	body, _ := build(t, Config{}, req, false)
	field(t, body, "system", `[{"type":"text","text":"sys","cache_control":{"type":"ephemeral","ttl":"5m"}}]`)

	for _, off := range []any{false, nil} {
		req.Options = map[string]any{"cache_control": off}
		body, _ := build(t, Config{}, req, false)
		field(t, body, "system", `"sys"`)
		if strings.Contains(string(body["messages"])+string(body["tools"]), "cache_control") {
			t.Errorf("cache_control %v still placed", off)
		}
	}

	// A thinking block cannot carry a breakpoint: the one before it does.
	req = &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.TextPart{Text: "t"}, runlet.ReasoningPart{Text: "r", Signature: "s", Provider: "anthropic"}}},
	}, Options: map[string]any{"cache_control": true}}
	body, _ = build(t, Config{}, req, false)
	field(t, body, "messages", `[{"role":"user","content":[{"type":"text","text":"q"}]},
		{"role":"assistant","content":[{"type":"text","text":"t","cache_control":{"type":"ephemeral"}},{"type":"thinking","thinking":"r","signature":"s"}]}]`)
}

func TestRequestOutputSchema(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}
	req := userRequest("x")
	req.OutputSchema = &runlet.OutputSchema{Name: "out", Schema: schema}
	body, _ := build(t, Config{}, req, false)
	field(t, body, "output_config", `{"format":{"type":"json_schema","schema":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}}}`)

	req.Options = map[string]any{"output_config": map[string]any{"effort": "low"}}
	body, _ = build(t, Config{}, req, false)
	field(t, body, "output_config", `{"effort":"low","format":{"type":"json_schema","schema":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}}}`)
	if _, ok := req.Options["output_config"].(map[string]any)["format"]; ok {
		t.Error("the caller's option map was modified")
	}

	req.OutputSchema = nil
	body, _ = build(t, Config{}, req, false)
	field(t, body, "output_config", `{"effort":"low"}`)
}

// TestRequestDoesNotModifyInput checks that building a request leaves the
// caller's request untouched (it may be reused for the next turn).
func TestRequestDoesNotModifyInput(t *testing.T) {
	req := &runlet.ModelRequest{
		Instructions: "s",
		Messages: []runlet.Message{
			runlet.UserText("a"),
			{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "x.y", Content: "c"}}},
		},
		Tools:   []runlet.ToolSpec{{Name: "t"}},
		Options: map[string]any{"cache_control": true, "thinking": 2000},
	}
	before, _ := json.Marshal(req)
	build(t, Config{}, req, false)
	after, _ := json.Marshal(req)
	if string(before) != string(after) {
		t.Errorf("request modified:\n%s\n%s", before, after)
	}
}

func TestInvalidErrorIsTyped(t *testing.T) {
	m := newTestModel("http://127.0.0.1:1", Config{})
	_, err := m.Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Options: map[string]any{"max_tokens": "x"}})
	var perr *runlet.ProviderError
	if !errors.As(err, &perr) || perr.StatusCode != 0 {
		t.Fatalf("err = %v", err)
	}
	_, _, err = collect(t, m.Stream(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Options: map[string]any{"max_tokens": "x"}}))
	requireProviderError(t, err)
}
