package openai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

var trPNG = []byte("\x89PNG\r\n\x1a\nxx")

// trTurn is a history whose tool result is res.
func trTurn(res runlet.ToolResultPart) *runlet.ModelRequest {
	return &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("look"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "call_1", Name: "shot", Arguments: json.RawMessage(`{}`)}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{res}},
	}}
}

// A tool result's parts go as function_call_output's content items
// (input_text, input_image, input_file), by both request builders, in a
// body the OpenAPI document accepts.
func TestResponsesToolResultParts(t *testing.T) {
	for name, tc := range map[string]struct {
		res  runlet.ToolResultPart
		want string // the output
	}{
		"text only, as before": {runlet.ToolResultPart{CallID: "call_1", Content: "sunny"}, `"sunny"`},
		"image and text": {
			runlet.ToolResultPart{CallID: "call_1", Content: "the screen", Parts: []runlet.Part{runlet.Text("the screen"), runlet.Image("image/png", trPNG)}},
			`[{"type":"input_text","text":"the screen"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgp4eA==","detail":"auto"}]`,
		},
		"files, structured text first": {
			runlet.ToolResultPart{CallID: "call_1", Content: `{"n":1}`, Structured: json.RawMessage(`{"n":1}`), Parts: []runlet.Part{
				runlet.File("r.pdf", "application/pdf", []byte("%PDF-1.7")),
				runlet.FilePart{URL: "https://example.test/d.pdf"},
				runlet.ImageURL("https://example.test/a.png"),
			}},
			`[{"type":"input_text","text":"{\"n\":1}"},{"type":"input_file","filename":"r.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjc="},{"type":"input_file","file_url":"https://example.test/d.pdf"},{"type":"input_image","image_url":"https://example.test/a.png","detail":"auto"}]`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			m := respModel("http://unused")
			for _, fast := range []bool{true, false} {
				b, err := m.build(trTurn(tc.res), false, fast)
				if err != nil {
					t.Fatal(err)
				}
				respValidate(t, b.body)
				var body struct {
					Input []map[string]json.RawMessage `json:"input"`
				}
				if err := json.Unmarshal(b.body, &body); err != nil {
					t.Fatal(err)
				}
				out := body.Input[2]
				if string(out["type"]) != `"function_call_output"` || string(out["output"]) != tc.want {
					t.Errorf("fast=%v: item %v, output\n  %s\nwant\n  %s", fast, out, out["output"], tc.want)
				}
			}
		})
	}
}

// Audio, which the Responses API does not take as input, is a typed
// ErrInvalidRequest from both builders, in a tool result and in a user
// message.
func TestResponsesAudioIsInvalidRequest(t *testing.T) {
	wav := runlet.Audio("audio/wav", []byte("RIFF"))
	for name, req := range map[string]*runlet.ModelRequest{
		"tool result":  trTurn(runlet.ToolResultPart{CallID: "call_1", Content: "x", Parts: []runlet.Part{runlet.Text("x"), wav}}),
		"user message": {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.Text("hear"), wav}}}},
	} {
		for _, fast := range []bool{true, false} {
			_, err := respModel("http://unused").build(req, false, fast)
			if !errors.Is(err, runlet.ErrInvalidRequest) || !strings.Contains(err.Error(), "audio") {
				t.Errorf("%s, fast=%v: err = %v", name, fast, err)
			}
		}
	}
}
