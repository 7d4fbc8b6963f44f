package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// toolTurn is a history whose tool result is res.
func toolTurn(res runlet.ToolResultPart) *runlet.ModelRequest {
	return &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("look"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlet.ToolCallPart{ID: "toolu_1", Name: "shot", Arguments: json.RawMessage(`{}`)}}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{res}},
	}}
}

// A tool result's parts go as the tool_result's content blocks, as the
// Messages API documents them: text, image (base64 or url source) and
// document (base64 PDF, text source, url).
func TestToolResultPartsAreContentBlocks(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nxx")
	for name, tc := range map[string]struct {
		res  runlet.ToolResultPart
		want string // the tool_result block
	}{
		"text only, as before": {
			runlet.ToolResultPart{CallID: "toolu_1", Content: "sunny"},
			`{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}`,
		},
		"image and text": {
			runlet.ToolResultPart{CallID: "toolu_1", Content: "the screen", Parts: []runlet.Part{runlet.Text("the screen"), runlet.Image("image/png", png)}},
			`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"the screen"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgp4eA=="}}]}`,
		},
		"image by URL, error": {
			runlet.ToolResultPart{CallID: "toolu_1", IsError: true, Parts: []runlet.Part{runlet.ImageURL("https://example.test/a.png")}},
			`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"image","source":{"type":"url","url":"https://example.test/a.png"}}],"is_error":true}`,
		},
		"documents, structured text first": {
			runlet.ToolResultPart{CallID: "toolu_1", Content: `{"pages":1}`, Structured: json.RawMessage(`{"pages":1}`), Parts: []runlet.Part{
				runlet.File("r.pdf", "application/pdf", []byte("%PDF-1.7")),
				runlet.File("notes.txt", "text/plain", []byte("hello")),
				runlet.FilePart{URL: "https://example.test/d.pdf", MediaType: "application/pdf"},
			}},
			`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"{\"pages\":1}"},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjc="},"title":"r.pdf"},{"type":"document","source":{"type":"text","media_type":"text/plain","data":"hello"},"title":"notes.txt"},{"type":"document","source":{"type":"url","url":"https://example.test/d.pdf"}}]}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			body, _ := build(t, Config{}, toolTurn(tc.res), false)
			var msgs []struct {
				Content []json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(body["messages"], &msgs); err != nil {
				t.Fatal(err)
			}
			got := msgs[2].Content[0]
			if !jsonEqual(t, got, []byte(tc.want)) {
				t.Errorf("tool_result =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

// Audio, which the Messages API does not take, is a typed
// ErrInvalidRequest, in a tool result and in a user message: never a
// silent drop.
func TestAudioIsInvalidRequest(t *testing.T) {
	wav := runlet.Audio("audio/wav", []byte("RIFF"))
	for name, req := range map[string]*runlet.ModelRequest{
		"tool result":  toolTurn(runlet.ToolResultPart{CallID: "toolu_1", Content: "x", Parts: []runlet.Part{runlet.Text("x"), wav}}),
		"user message": {Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.Text("hear"), wav}}}},
	} {
		m := newTestModel("http://127.0.0.1:1", Config{})
		_, err := m.buildRequest(req, false)
		if !errors.Is(err, runlet.ErrInvalidRequest) || !strings.Contains(err.Error(), "audio") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
