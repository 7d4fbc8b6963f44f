package uistream_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/nodetest"
	"github.com/runlet/runlet/runlettest"
	"github.com/runlet/runlet/uistream"
)

// reasoningCall is a reply with reasoning, then one tool call.
func reasoningCall(reasoning string, call runlet.ToolCallPart) runlettest.Reply {
	r := runlettest.ToolCallReply(call)
	r.Response.Message.Parts = append([]runlet.Part{runlet.ReasoningPart{Text: reasoning}}, r.Response.Message.Parts...)
	return r
}

type clientSummary struct {
	RawTypes []string        `json:"rawTypes"`
	First    json.RawMessage `json:"first"`
	Second   json.RawMessage `json:"second"`
	Errors   []string        `json:"errors"`
}

// uiPartJSON is what the tests read of a UIMessage part.
type uiPartJSON struct {
	Type       string          `json:"type"`
	Text       string          `json:"text"`
	State      string          `json:"state"`
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Output     json.RawMessage `json:"output"`
	Data       json.RawMessage `json:"data"`
	URL        string          `json:"url"`
	Approval   *struct {
		ID       string `json:"id"`
		Approved *bool  `json:"approved"`
	} `json:"approval"`
}

type uiMessageJSON struct {
	ID       string       `json:"id"`
	Role     string       `json:"role"`
	Parts    []uiPartJSON `json:"parts"`
	Metadata struct {
		RunID  string       `json:"runId"`
		Status string       `json:"status"`
		Usage  runlet.Usage `json:"usage"`
	} `json:"metadata"`
}

func parseMessage(t *testing.T, b json.RawMessage) uiMessageJSON {
	t.Helper()
	var m uiMessageJSON
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("message %s: %v", b, err)
	}
	return m
}

func runClient(t *testing.T, url, scenario string) clientSummary {
	t.Helper()
	out := nodetest.Run(t, "aisdk-client.mjs", nil, url, scenario)
	var s clientSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("summary %s: %v", out, err)
	}
	return s
}

// TestAISDKClient reads the handler's streams with the AI SDK's own client
// (ai's DefaultChatTransport and readUIMessageStream, as useChat reads
// them), every chunk validated against the SDK's uiMessageChunkSchema:
// reasoning, a tool call and its output, an approval answered as
// addToolApprovalResponse does and the resumed run in the same message.
func TestAISDKClient(t *testing.T) {
	m := runlettest.NewModel(
		// raw request
		reasoningCall("Paris first.", runlettest.Call("call_w", "get_weather", `{"city":"Paris"}`)),
		runlettest.ToolCallReply(runlettest.Call("call_d", "delete_file", `{"path":"/tmp/x"}`)),
		// the transport's request, then its resume
		reasoningCall("Paris first.", runlettest.Call("call_w2", "get_weather", `{"city":"Paris"}`)),
		runlettest.ToolCallReply(runlettest.Call("call_d2", "delete_file", `{"path":"/tmp/x"}`)),
		runlettest.TextReply("Sunny in Paris; /tmp/x is deleted."),
	)
	m.ChunkSize = 3
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: newAgent(m)}))
	defer srv.Close()

	s := runClient(t, srv.URL, "approval")
	if !strings.Contains(strings.Join(s.RawTypes, " "), "tool-approval-request finish-step finish") {
		t.Errorf("raw chunks: %v", s.RawTypes)
	}
	first := parseMessage(t, s.First)
	var states []string
	for _, p := range first.Parts {
		states = append(states, p.Type+":"+p.State+p.Text)
	}
	want := "step-start: reasoning:doneParis first. dynamic-tool:output-available step-start: dynamic-tool:approval-requested"
	if got := strings.Join(states, " "); got != want {
		t.Errorf("first message parts:\n got %s\nwant %s", got, want)
	}
	if first.Metadata.Status != "interrupted" || first.ID != first.Metadata.RunID || first.ID == "" {
		t.Errorf("first message id %q metadata %+v", first.ID, first.Metadata)
	}
	second := parseMessage(t, s.Second)
	if second.ID != first.ID {
		t.Errorf("the resumed run wrote message %q, not %q", second.ID, first.ID)
	}
	last := second.Parts[len(second.Parts)-1]
	if last.Type != "text" || last.Text != "Sunny in Paris; /tmp/x is deleted." || last.State != "done" {
		t.Errorf("last part %+v", last)
	}
	var deleted *uiPartJSON
	for i, p := range second.Parts {
		if p.ToolCallID == "call_d2" {
			deleted = &second.Parts[i]
		}
	}
	if deleted == nil || deleted.State != "output-available" || string(deleted.Output) != `"deleted /tmp/x"` ||
		deleted.Approval == nil || deleted.Approval.Approved == nil || !*deleted.Approval.Approved {
		t.Errorf("approved call's part: %+v", deleted)
	}
	if second.Metadata.Status != "finished" || second.Metadata.Usage.TotalTokens != 45 {
		t.Errorf("second metadata %+v", second.Metadata)
	}
}

// TestAISDKClientFailure: a failed run reaches the client as the
// protocol's error, whose text says nothing of the error's own.
func TestAISDKClientFailure(t *testing.T) {
	secret := errors.New("dial tcp 10.1.2.3:443: token sk-live-123 refused")
	m := runlettest.NewModel(runlettest.ErrorReply(secret), runlettest.ErrorReply(secret))
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: newAgent(m)}))
	defer srv.Close()
	s := runClient(t, srv.URL, "failure")
	if got := strings.Join(s.RawTypes, " "); got != "start start-step finish-step error finish" {
		t.Errorf("raw chunks: %s", got)
	}
	if len(s.Errors) != 1 || !strings.HasPrefix(s.Errors[0], "the agent's run failed") {
		t.Errorf("client errors: %q", s.Errors)
	}
	for _, e := range s.Errors {
		if strings.Contains(e, "sk-live") || strings.Contains(e, "10.1.2.3") {
			t.Errorf("the page saw the error's text: %q", e)
		}
	}
}

// TestAISDKClientAgents: an agent called as a tool reaches the page as
// data parts under its call, which the SDK's schema and reader accept.
func TestAISDKClientAgents(t *testing.T) {
	sub := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_s", "get_weather", `{"city":"Oslo"}`)),
		runlettest.TextReply("Oslo is sunny."),
		runlettest.ToolCallReply(runlettest.Call("call_s", "get_weather", `{"city":"Oslo"}`)),
		runlettest.TextReply("Oslo is sunny."),
	)
	researcher := newAgent(sub)
	researcher.Name = "researcher"
	top := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_r", "researcher", `{"input":"Oslo weather"}`)),
		runlettest.TextReply("Oslo: sunny."),
		runlettest.ToolCallReply(runlettest.Call("call_r", "researcher", `{"input":"Oslo weather"}`)),
		runlettest.TextReply("Oslo: sunny."),
	)
	agent := &runlet.Agent{Name: "assistant", Model: top, Tools: []runlet.Tool{researcher.AsTool()}}
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: agent}))
	defer srv.Close()
	s := runClient(t, srv.URL, "plain")
	msg := parseMessage(t, s.First)
	var agentPart, toolPart *uiPartJSON
	for i, p := range msg.Parts {
		switch p.Type {
		case "data-agent":
			agentPart = &msg.Parts[i]
		case "data-agent-tool":
			toolPart = &msg.Parts[i]
		}
	}
	if agentPart == nil || !strings.Contains(string(agentPart.Data), `"status":"finished"`) || !strings.Contains(string(agentPart.Data), `"output":"Oslo is sunny."`) {
		t.Errorf("agent part %+v in %s", agentPart, s.First)
	}
	if toolPart == nil || !strings.Contains(string(toolPart.Data), `"output":"sunny in Oslo"`) {
		t.Errorf("agent tool part %+v", toolPart)
	}
}

type forecast struct {
	City  string `json:"city"`
	TempC int    `json:"tempC"`
}

// TestAISDKClientTypedOutput: a run with an output schema (what RunAs and
// StreamAs set) sends the value as it fills in and the checked value as a
// data-output part, which the SDK's reader keeps as one part.
func TestAISDKClientTypedOutput(t *testing.T) {
	answer := `{"city":"Paris","tempC":21}`
	m := runlettest.NewModel(runlettest.TextReply(answer), runlettest.TextReply(answer))
	m.ChunkSize = 5
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{
		Runtime: runlet.NewRuntime(), Agent: newAgent(m),
		RunOptions: func(*http.Request) []runlet.RunOption {
			return []runlet.RunOption{runlet.WithOutputSchema(&runlet.OutputSchema{Name: "forecast", Schema: runlet.SchemaFor[forecast]()})}
		},
	}))
	defer srv.Close()
	s := runClient(t, srv.URL, "plain")
	if n := strings.Count(strings.Join(s.RawTypes, " "), "data-output"); n < 3 {
		t.Errorf("%d data-output chunks: %v", n, s.RawTypes)
	}
	msg := parseMessage(t, s.First)
	var outputs []string
	for _, p := range msg.Parts {
		if p.Type == "data-output" {
			outputs = append(outputs, string(p.Data))
		}
	}
	if len(outputs) != 1 || outputs[0] != answer {
		t.Errorf("data-output parts %q, want one holding %s", outputs, answer)
	}
}

// TestAISDKClientGuardrailWithdraws: a tripwire on the streamed answer
// takes it back (reset-step, which the SDK's reader applies: the page's
// message loses the step's text), the tripwire stays as a data-guardrail
// part, and the run's failure is the protocol's error.
func TestAISDKClientGuardrailWithdraws(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply("The launch code is 0000."), runlettest.TextReply("The launch code is 0000."))
	m.ChunkSize = 4
	guard := runlet.Guardrail{Name: "no-codes", Output: func(ctx context.Context, out runlet.GuardrailOutput) (runlet.GuardrailVerdict, error) {
		if strings.Contains(out.Text, "code") {
			return runlet.Tripwire("codes are not shared", nil), nil
		}
		return runlet.GuardrailVerdict{}, nil
	}}
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{
		Runtime: runlet.NewRuntime(runlet.WithGuardrails(guard)), Agent: newAgent(m),
	}))
	defer srv.Close()
	s := runClient(t, srv.URL, "failure")
	raw := strings.Join(slices.Compact(s.RawTypes), " ")
	if !strings.Contains(raw, "text-delta text-end message-metadata data-guardrail reset-step data-guardrail finish-step error finish") {
		t.Errorf("raw chunks: %s", raw)
	}
	msg := parseMessage(t, s.First)
	var parts []string
	for _, p := range msg.Parts {
		parts = append(parts, p.Type+string(p.Data))
	}
	want := `step-start data-guardrail{"guardrail":"no-codes","stage":"output","action":"trip","message":"codes are not shared"}`
	if got := strings.Join(parts, " "); got != want {
		t.Errorf("message parts after the withdrawal:\n got %s\nwant %s", got, want)
	}
	if len(s.Errors) != 1 {
		t.Errorf("client errors %q", s.Errors)
	}
}

// TestAISDKClientPartsAndSources: a tool result's image reaches the page
// as a file part, a structured result as the tool's output, citations as
// source parts and a provider-hosted tool as a tool part the provider
// executed; the SDK's schema, reader and validateUIMessages accept all.
func TestAISDKClientPartsAndSources(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n0000")
	chart := runlet.NewTool("chart", "Draws a chart.", func(ctx context.Context, _ struct{}) (runlet.ToolOutput, error) {
		return runlet.Output(runlet.Text("a chart"), runlet.Image("image/png", png)), nil
	})
	stats := runlet.NewTool("stats", "Returns stats.", func(ctx context.Context, _ struct{}) (runlet.ToolOutput, error) {
		return runlet.StructuredOutput(map[string]int{"mean": 3}), nil
	})
	final := runlettest.TextReply("")
	final.Response.Message.Parts = []runlet.Part{
		runlet.HostedToolPart{ID: "ws_1", Kind: runlet.HostedWebSearch, Input: json.RawMessage(`{"query":"paris weather"}`),
			Sources: []runlet.Citation{{URL: "https://weather.example/paris", Title: "Paris weather"}}},
		runlet.TextPart{Text: "Sunny, per the source.", Citations: []runlet.Citation{
			{URL: "https://weather.example/paris", Title: "Paris weather"}, {URL: "https://other.example/", Title: "Other"}}},
	}
	replies := []runlettest.Reply{
		runlettest.ToolCallReply(runlettest.Call("call_c", "chart", `{}`)),
		runlettest.ToolCallReply(runlettest.Call("call_s", "stats", `{}`)),
		final,
	}
	m := runlettest.NewModel(append(slices.Clone(replies), replies...)...)
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{
		Runtime: runlet.NewRuntime(), Agent: &runlet.Agent{Name: "a", Model: m, Tools: []runlet.Tool{chart, stats}},
	}))
	defer srv.Close()
	s := runClient(t, srv.URL, "plain")
	msg := parseMessage(t, s.First)
	var got []string
	for _, p := range msg.Parts {
		switch p.Type {
		case "file", "source-url", "dynamic-tool", "text":
			got = append(got, p.Type+" "+p.ToolName+string(p.Output)+p.Text+p.URL)
		}
	}
	want := []string{
		`dynamic-tool chart"a chart"`,
		"file data:image/png;base64," + base64.StdEncoding.EncodeToString(png),
		`dynamic-tool stats{"mean":3}`,
		"text Sunny, per the source.",
		"source-url https://weather.example/paris",
		"source-url https://other.example/",
		`dynamic-tool web_search{"sources":[{"url":"https://weather.example/paris","title":"Paris weather"}]}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAISDKClientInputError: a call the model got wrong (an unknown tool,
// arguments its schema refuses) is the protocol's tool-input-error, and
// the page's part shows the error; the model sees it and goes on.
func TestAISDKClientInputError(t *testing.T) {
	replies := []runlettest.Reply{
		runlettest.ToolCallReply(runlettest.Call("call_u", "no_such_tool", `{}`), runlettest.Call("call_a", "get_weather", `{"city":7}`)),
		runlettest.TextReply("Sorry."),
	}
	m := runlettest.NewModel(append(slices.Clone(replies), replies...)...)
	srv := httptest.NewServer(uistream.NewAISDKHandler(uistream.Options{Runtime: runlet.NewRuntime(), Agent: newAgent(m)}))
	defer srv.Close()
	s := runClient(t, srv.URL, "plain")
	if n := strings.Count(strings.Join(s.RawTypes, " "), "tool-input-error"); n != 2 {
		t.Errorf("%d tool-input-error chunks: %v", n, s.RawTypes)
	}
	var states []string
	for _, p := range parseMessage(t, s.First).Parts {
		if p.Type == "dynamic-tool" {
			states = append(states, p.ToolCallID+":"+p.State)
		}
	}
	if got := strings.Join(states, " "); got != "call_u:output-error call_a:output-error" {
		t.Errorf("tool parts %s", got)
	}
}
