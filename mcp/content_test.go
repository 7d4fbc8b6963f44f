package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

var (
	contentPNG = []byte("\x89PNG\r\n\x1a\nimage")
	contentPDF = []byte("%PDF-1.7 doc")
)

// kindsServer is an MCP server (the official SDK, in process) whose tools
// return each kind of content, and structured content with and without
// an output schema.
func kindsServer() *sdkmcp.Server {
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "kinds", Version: "v0.0.1"}, nil)
	object := json.RawMessage(`{"type":"object"}`)
	result := func(r *sdkmcp.CallToolResult) sdkmcp.ToolHandler {
		return func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) { return r, nil }
	}
	s.AddTool(&sdkmcp.Tool{Name: "kinds", InputSchema: object}, result(&sdkmcp.CallToolResult{Content: []sdkmcp.Content{
		&sdkmcp.TextContent{Text: "Here:"},
		&sdkmcp.ImageContent{MIMEType: "image/png", Data: contentPNG},
		&sdkmcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF....WAVE")},
		&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "buy milk"}},
		&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: "file:///docs/report.pdf", MIMEType: "application/pdf", Blob: contentPDF}},
		&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: "file:///shot.png", MIMEType: "image/png", Blob: contentPNG}},
		&sdkmcp.ResourceLink{Name: "chart", URI: "https://example.test/chart.png", MIMEType: "image/png"},
		&sdkmcp.ResourceLink{Name: "paper.pdf", URI: "https://example.test/paper.pdf", MIMEType: "application/pdf"},
		&sdkmcp.ResourceLink{Name: "local.pdf", URI: "file:///tmp/local.pdf"},
	}, StructuredContent: map[string]any{"pages": 3}}))
	schema := json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`)
	s.AddTool(&sdkmcp.Tool{Name: "typed", InputSchema: object, OutputSchema: schema}, result(&sdkmcp.CallToolResult{
		Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: `{"temp":18.5}`}}, StructuredContent: map[string]any{"temp": 18.5}}))
	s.AddTool(&sdkmcp.Tool{Name: "typed_wrong", InputSchema: object, OutputSchema: schema}, result(&sdkmcp.CallToolResult{
		StructuredContent: map[string]any{"temp": "warm"}}))
	s.AddTool(&sdkmcp.Tool{Name: "typed_missing", InputSchema: object, OutputSchema: schema}, result(&sdkmcp.CallToolResult{
		Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "18.5"}}}))
	return s
}

// Each content kind becomes the matching part, in order, and
// structuredContent the structured value.
func TestCallPartsKeepsKinds(t *testing.T) {
	tools, err := mcp.Tools(t.Context(), connect(t, kindsServer()))
	if err != nil {
		t.Fatal(err)
	}
	byName := toolsByName(t, tools)
	out, err := byName["kinds"].(runlet.PartsTool).CallParts(t.Context(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []runlet.Part{
		runlet.Text("Here:"),
		runlet.Image("image/png", contentPNG),
		runlet.Audio("audio/wav", []byte("RIFF....WAVE")),
		runlet.Text("\n[resource file:///notes.txt]\nbuy milk"),
		runlet.File("report.pdf", "application/pdf", contentPDF),
		runlet.Image("image/png", contentPNG),
		runlet.ImagePart{URL: "https://example.test/chart.png", MediaType: "image/png"},
		runlet.FilePart{Name: "paper.pdf", URL: "https://example.test/paper.pdf", MediaType: "application/pdf"},
		runlet.Text("\n[resource link local.pdf: file:///tmp/local.pdf]"),
	}
	if !reflect.DeepEqual(out.Parts, want) {
		t.Errorf("parts:\n got  %#v\n want %#v", out.Parts, want)
	}
	if s, _ := json.Marshal(out.Structured); string(s) != `{"pages":3}` {
		t.Errorf("structured = %s", s)
	}

	// The output schema is honoured: a valid value is handed on, a wrong
	// or missing one is an error (an is-error result in a run).
	out, err = byName["typed"].(runlet.PartsTool).CallParts(t.Context(), json.RawMessage(`{}`))
	if s, _ := json.Marshal(out.Structured); err != nil || string(s) != `{"temp":18.5}` {
		t.Errorf("typed: %s, %v", s, err)
	}
	for name, want := range map[string]string{
		"typed_wrong":   "does not match its output schema",
		"typed_missing": "returned no structured content",
	} {
		if _, err := byName[name].(runlet.PartsTool).CallParts(t.Context(), json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
		if _, err := byName[name].Call(t.Context(), json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s Call: err = %v, want %q", name, err, want)
		}
	}
}

// In a run, the server's image reaches the model as an image, not as the
// text "[image image/png, N bytes]".
func TestRunGetsMCPImage(t *testing.T) {
	tools, err := mcp.Tools(t.Context(), connect(t, kindsServer()))
	if err != nil {
		t.Fatal(err)
	}
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "kinds", `{}`)), runlettest.TextReply("seen"))
	if _, err := runlet.NewRuntime().Run(t.Context(), &runlet.Agent{Model: model, Tools: tools}, "look"); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	res := reqs[1].Messages[2].Parts[0].(runlet.ToolResultPart)
	if res.IsError || len(res.Parts) != 9 || !reflect.DeepEqual(res.Parts[1], runlet.Image("image/png", contentPNG)) || string(res.Structured) != `{"pages":3}` {
		t.Fatalf("result = %+v", res)
	}
	if strings.Contains(res.Content, "[image") || !strings.HasPrefix(res.Content, "Here:\n[resource file:///notes.txt]") {
		t.Errorf("content = %q", res.Content)
	}
}

// Served over MCP, a runlet tool's parts become MCP content of the
// matching kinds and its structured value structuredContent; an agent's
// answer with an image is served with the image.
func TestServedPartsAreMCPContent(t *testing.T) {
	shot := runlet.NewTool("shot", "Takes a screenshot.", func(context.Context, struct{}) (runlet.ToolOutput, error) {
		return runlet.ToolOutput{Parts: []runlet.Part{
			runlet.Text("the screen"),
			runlet.Image("image/png", contentPNG),
			runlet.Audio("audio/wav", []byte("RIFF")),
			runlet.File("report.pdf", "application/pdf", contentPDF),
			runlet.File("notes.txt", "text/plain", []byte("buy milk")),
			runlet.ImageURL("https://example.test/a.png"),
		}, Structured: map[string]int{"w": 640}}, nil
	})
	answer := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.Text("drawn:"), runlet.Image("image/png", contentPNG)}}
	painter := &runlet.Agent{Name: "painter", Model: runlettest.NewModel(runlettest.Reply{Response: &runlet.ModelResponse{Message: answer, FinishReason: runlet.FinishStop}})}
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "served", Version: "v0.0.1"}, nil)
	if err := mcp.AddTools(s, shot); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddAgent(s, mcp.AgentTool{Agent: painter}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "shot", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	want := []sdkmcp.Content{
		&sdkmcp.TextContent{Text: "the screen"},
		&sdkmcp.ImageContent{MIMEType: "image/png", Data: contentPNG},
		&sdkmcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
		&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: "runlet:report.pdf", MIMEType: "application/pdf", Blob: contentPDF}},
		&sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{URI: "runlet:notes.txt", MIMEType: "text/plain", Text: "buy milk"}},
		&sdkmcp.ResourceLink{Name: "a.png", URI: "https://example.test/a.png"},
	}
	got, _ := json.Marshal(res.Content)
	wantJSON, _ := json.Marshal(want)
	if res.IsError || string(got) != string(wantJSON) {
		t.Errorf("content:\n got  %s\n want %s", got, wantJSON)
	}
	if s, _ := json.Marshal(res.StructuredContent); string(s) != `{"w":640}` {
		t.Errorf("structuredContent = %s", s)
	}

	res, err = cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "painter", Arguments: map[string]any{"prompt": "draw"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(res.Content)
	wantJSON, _ = json.Marshal([]sdkmcp.Content{&sdkmcp.TextContent{Text: "drawn:"}, &sdkmcp.ImageContent{MIMEType: "image/png", Data: contentPNG}})
	if res.IsError || string(got) != string(wantJSON) {
		t.Errorf("agent content:\n got  %s\n want %s", got, wantJSON)
	}
}
