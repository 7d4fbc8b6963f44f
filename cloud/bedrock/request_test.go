package bedrock_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

// sent runs req through Generate against the fake and returns the body
// Bedrock received, compacted.
func sent(t *testing.T, cfg bedrock.Config, req *runlet.ModelRequest) string {
	t.Helper()
	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "ok"})
	defer srv.Close()
	m := newModel(t, srv, cfg)
	if _, err := m.Generate(ctx(t), req); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return string(srv.Requests()[0].Body)
}

func float(f float64) *float64 { return &f }

func TestRequestEncoding(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n0000")
	weather := runlet.ToolSpec{Name: "get_weather", Description: "Weather in a city", InputSchema: runlet.SchemaFor[struct {
		City string `json:"city"`
	}]()}
	history := []runlet.Message{
		runlet.UserText("Weather in Paris?"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ReasoningPart{Text: "think", Signature: "sig-1", Provider: "bedrock"},
			runlet.ReasoningPart{Text: "foreign", Signature: "sig-x", Provider: "anthropic"},
			runlet.ReasoningPart{Encrypted: "cmVkYWN0ZWQ=", Provider: "bedrock"},
			runlet.TextPart{Text: "  "},
			runlet.ToolCallPart{ID: "call.1/x", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "call.1/x", Content: "rain", IsError: true}}},
		runlet.UserText("Thanks"),
	}
	tests := []struct {
		name string
		req  runlet.ModelRequest
		want []string // substrings of the compacted body
		not  []string
	}{
		{"system and settings",
			runlet.ModelRequest{Instructions: "Be brief.", Messages: []runlet.Message{runlet.UserText("Hi")},
				Settings: runlet.Settings{Temperature: float(0.2), TopP: float(0.9), MaxOutputTokens: 300, StopSequences: []string{"END"}}},
			[]string{`"system":[{"text":"Be brief."}]`, `"inferenceConfig":{"maxTokens":300,"temperature":0.2,"topP":0.9,"stopSequences":["END"]}`, `"messages":[{"role":"user","content":[{"text":"Hi"}]}]`},
			[]string{"toolConfig", "cachePoint"}},
		{"history: reasoning, tool call and result",
			runlet.ModelRequest{Messages: history, Tools: []runlet.ToolSpec{weather}},
			[]string{
				`{"reasoningContent":{"reasoningText":{"text":"think","signature":"sig-1"}}}`,
				`{"reasoningContent":{"redactedContent":"cmVkYWN0ZWQ="}}`,
				`{"toolUse":{"toolUseId":"call_1_x","name":"get_weather","input":{"city":"Paris"}}}`,
				`"role":"user","content":[{"toolResult":{"toolUseId":"call_1_x","content":[{"text":"rain"}],"status":"error"}},{"text":"Thanks"}]`,
				`"toolSpec":{"name":"get_weather","description":"Weather in a city","inputSchema":{"json":{`,
			},
			[]string{"foreign", "sig-x", `"text":"  "`, "toolChoice"}},
		{"tool choice required", runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Tools: []runlet.ToolSpec{weather}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceRequired}},
			[]string{`"toolChoice":{"any":{}}`}, nil},
		{"tool choice named", runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Tools: []runlet.ToolSpec{weather}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool, Name: "get_weather"}},
			[]string{`"toolChoice":{"tool":{"name":"get_weather"}}`}, nil},
		{"tool choice none leaves tools out", runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Tools: []runlet.ToolSpec{weather}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceNone}},
			nil, []string{"toolConfig"}},
		{"tool choice none with tool history keeps toolConfig", runlet.ModelRequest{Messages: history, Tools: []runlet.ToolSpec{weather}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceNone}},
			[]string{`"toolConfig":{"tools":[`}, []string{"toolChoice"}},
		{"images and documents",
			runlet.ModelRequest{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{
				runlet.ImagePart{Data: png},
				runlet.ImagePart{URL: "data:image/jpeg;base64,/9j/4AAQ"},
				runlet.ImagePart{URL: "s3://bucket/cat.webp"},
				runlet.FilePart{Name: "Q3 report (final).pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.7")},
				runlet.FilePart{Data: []byte("a,b\n1,2\n"), MediaType: "text/csv"},
				runlet.FilePart{URL: "s3://bucket/notes.md"},
			}}}},
			[]string{
				`{"image":{"format":"png","source":{"bytes":"iVBORw0KGgowMDAw"}}}`,
				`{"image":{"format":"jpeg","source":{"bytes":"/9j/4AAQ"}}}`,
				`{"image":{"format":"webp","source":{"s3Location":{"uri":"s3://bucket/cat.webp"}}}}`,
				`{"document":{"format":"pdf","name":"Q3 report (final)","source":{"bytes":"JVBERi0xLjc="}}}`,
				`{"document":{"format":"csv","name":"document-2","source":{"bytes":`,
				`{"document":{"format":"md","name":"document-3","source":{"s3Location":{"uri":"s3://bucket/notes.md"}}}}`,
			}, nil},
		{"cache points",
			runlet.ModelRequest{Instructions: "sys", Messages: []runlet.Message{runlet.UserText("x")}, Tools: []runlet.ToolSpec{weather}, Options: map[string]any{"cache_point": "1h"}},
			[]string{`"system":[{"text":"sys"},{"cachePoint":{"ttl":"1h","type":"default"}}]`, `{"cachePoint":{"ttl":"1h","type":"default"}}]}`, `"content":[{"text":"x"},{"cachePoint":{"ttl":"1h","type":"default"}}]`}, nil},
		{"claude reasoning budget",
			runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Settings: runlet.Settings{Reasoning: runlet.Reasoning{BudgetTokens: 2048, Effort: runlet.ReasoningHigh}}},
			[]string{`"additionalModelRequestFields":{"thinking":{"budget_tokens":2048,"type":"enabled"}}`, `"maxTokens":6144`}, []string{"effort"}},
		{"claude reasoning effort",
			runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh}}},
			[]string{`"additionalModelRequestFields":{"output_config":{"effort":"high"},"thinking":{"type":"adaptive"}}`}, []string{"maxTokens"}},
		{"options: guardrail, request fields, model",
			runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Options: map[string]any{
				"guardrailConfig":              map[string]any{"guardrailIdentifier": "gr1", "guardrailVersion": "DRAFT", "trace": "enabled"},
				"additionalModelRequestFields": map[string]any{"top_k": 5},
			}},
			[]string{`"guardrailConfig":{"guardrailIdentifier":"gr1","guardrailVersion":"DRAFT","trace":"enabled"}`, `"additionalModelRequestFields":{"top_k":5}`}, nil},
		{"output schema",
			runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, OutputSchema: &runlet.OutputSchema{Name: "answer v1", Schema: weather.InputSchema}},
			[]string{`"outputConfig":{"textFormat":{"structure":{"jsonSchema":{"name":"answer_v1","schema":"{`, `"type":"json_schema"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := sent(t, bedrock.Config{}, &tt.req)
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %s\nbody: %s", w, body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(body, n) {
					t.Errorf("body has %s\nbody: %s", n, body)
				}
			}
		})
	}
}

// Nova takes the effort as reasoningConfig; the option wins over the
// neutral setting.
func TestReasoningPerFamily(t *testing.T) {
	req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningLow}}}
	body := sent(t, bedrock.Config{Model: "us.amazon.nova-2-lite-v1:0"}, req)
	if !strings.Contains(body, `"additionalModelRequestFields":{"reasoningConfig":{"maxReasoningEffort":"low","type":"enabled"}}`) {
		t.Errorf("nova: %s", body)
	}
	for model, want := range map[string]string{
		"openai.gpt-oss-120b-1:0":       `"additionalModelRequestFields":{"reasoning_effort":"low"}`,
		"qwen.qwen3-32b-v1:0":           `"additionalModelRequestFields":{"reasoning_config":"low"}`,
		"us.deepseek.r1-v1:0":           `"messages"`,
		"meta.llama3-70b-instruct-v1:0": `"messages"`,
	} {
		body := sent(t, bedrock.Config{Model: model}, req)
		if !strings.Contains(body, want) || (want == `"messages"` && strings.Contains(body, "additionalModelRequestFields")) {
			t.Errorf("%s: %s", model, body)
		}
	}
	req.Options = map[string]any{"additionalModelRequestFields": map[string]any{"reasoningConfig": map[string]any{"type": "disabled"}}}
	body = sent(t, bedrock.Config{Model: "us.amazon.nova-2-lite-v1:0"}, req)
	if !strings.Contains(body, `"reasoningConfig":{"type":"disabled"}`) {
		t.Errorf("option does not win: %s", body)
	}
}

// Requests Bedrock cannot take fail before anything is sent, with
// ErrInvalidRequest.
func TestInvalidRequests(t *testing.T) {
	srv := bedrocktest.NewServer()
	defer srv.Close()
	m := newModel(t, srv, bedrock.Config{})
	user := func(p ...runlet.Part) []runlet.Message { return []runlet.Message{{Role: runlet.RoleUser, Parts: p}} }
	for name, req := range map[string]*runlet.ModelRequest{
		"https image":         {Messages: user(runlet.ImagePart{URL: "https://example.com/cat.png"})},
		"bmp image":           {Messages: user(runlet.ImagePart{Data: []byte("BM0000"), MediaType: "image/bmp"})},
		"zip document":        {Messages: user(runlet.FilePart{Data: []byte("PK\x03\x04"), MediaType: "application/zip"})},
		"model option":        {Messages: user(runlet.TextPart{Text: "x"}), Options: map[string]any{"model": 3}},
		"messages option":     {Messages: user(runlet.TextPart{Text: "x"}), Options: map[string]any{"messages": []any{}}},
		"named tool, no name": {Messages: user(runlet.TextPart{Text: "x"}), Tools: []runlet.ToolSpec{{Name: "t"}}, ToolChoice: runlet.ToolChoice{Mode: runlet.ToolChoiceTool}},
		"cache_point type":    {Messages: user(runlet.TextPart{Text: "x"}), Options: map[string]any{"cache_point": 3}},
	} {
		_, err := m.Generate(ctx(t), req)
		var perr *runlet.ProviderError
		if !errors.As(err, &perr) || !errors.Is(err, runlet.ErrInvalidRequest) {
			t.Errorf("%s: %v, want ErrInvalidRequest", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d invalid requests sent", n)
	}
	if _, err := m.Generate(ctx(t), &runlet.ModelRequest{Messages: user(runlet.ImagePart{URL: "https://user:pw-secret@example.com/x.png?sig=abc"})}); err == nil || strings.Contains(err.Error(), "pw-secret") || strings.Contains(err.Error(), "sig=abc") {
		t.Errorf("the error shows the URL's credentials: %v", err)
	}
}

// A tool that returned parts has them sent natively in its toolResult:
// text, images and documents as content blocks, in order.
func TestToolResultParts(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n0000")
	req := &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("Chart?"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "c1", Name: "chart", Arguments: json.RawMessage(`{}`)}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c1", Name: "chart", Content: "the chart",
			Parts: []runlet.Part{runlet.TextPart{Text: "the chart"}, runlet.ImagePart{Data: png}, runlet.FilePart{Name: "data.csv", Data: []byte("a,b\n")}}}}},
	}, Tools: []runlet.ToolSpec{{Name: "chart"}}}
	body := sent(t, bedrock.Config{}, req)
	want := `{"toolResult":{"toolUseId":"c1","content":[{"text":"the chart"},{"image":{"format":"png","source":{"bytes":"iVBORw0KGgowMDAw"}}},{"document":{"format":"csv","name":"data","source":{"bytes":"YSxiCg=="}}}]}}`
	if !strings.Contains(body, want) {
		t.Errorf("body %s\nlacks %s", body, want)
	}
}

// Another provider's hosted tool part in the history goes as text (it
// failed the request); a hosted tool, which Converse cannot run, is an
// ErrInvalidRequest, not dropped.
func TestHostedToolsOnBedrock(t *testing.T) {
	hosted := runlet.HostedToolPart{ID: "srvtoolu_1", Kind: runlet.HostedWebSearch, Name: "web_search", Input: json.RawMessage(`{"query":"q"}`),
		Provider: "anthropic", Raw: json.RawMessage(`[{"type":"server_tool_use"}]`)}
	body := sent(t, bedrock.Config{Model: "anthropic.claude-sonnet-4-5"}, &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("q"), {Role: runlet.RoleAssistant, Parts: []runlet.Part{hosted, runlet.TextPart{Text: "found"}}}, runlet.UserText("more")}})
	want, _ := json.Marshal(hosted.Text())
	if !strings.Contains(body, `{"text":`+string(want)+`}`) || strings.Contains(body, "server_tool_use") {
		t.Errorf("body %s", body)
	}
	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "ok"})
	defer srv.Close()
	m := newModel(t, srv, bedrock.Config{Model: "anthropic.claude-sonnet-4-5"})
	_, err := m.Generate(ctx(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("q")}, HostedTools: []runlet.HostedTool{runlet.WebSearch()}})
	if !errors.Is(err, runlet.ErrInvalidRequest) {
		t.Errorf("web search on Bedrock: %v", err)
	}
}
