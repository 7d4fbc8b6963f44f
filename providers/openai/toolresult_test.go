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

// Chat Completions tool messages take text only (the OpenAPI document's
// tool message content parts are text): a result's images, files and
// audio go in one user message after the turn's tool messages, each
// tool message saying so, and the body stays one the API accepts. The
// shape is the one recorded traffic shows OpenAI answering (pydantic-ai's
// tests/models/cassettes/test_openai/test_image_as_binary_content_tool_response.yaml:
// a tool message of text, then a user message of text and image_url).
func TestChatToolResultAttachments(t *testing.T) {
	m := NewChatCompletions(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "gpt-test"})
	req := &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("look"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ToolCallPart{ID: "call_1", Name: "shot", Arguments: json.RawMessage(`{}`)},
			runlet.ToolCallPart{ID: "call_2", Name: "plain", Arguments: json.RawMessage(`{}`)},
			runlet.ToolCallPart{ID: "call_3", Name: "rec", Arguments: json.RawMessage(`{}`)},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{
			runlet.ToolResultPart{CallID: "call_1", Content: "the screen", Parts: []runlet.Part{runlet.Text("the screen"), runlet.Image("image/png", trPNG), runlet.File("r.pdf", "application/pdf", []byte("%PDF"))}},
			runlet.ToolResultPart{CallID: "call_2", Content: "plain"},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{
			runlet.ToolResultPart{CallID: "call_3", Parts: []runlet.Part{runlet.Audio("audio/mpeg", []byte("ID3"))}},
		}},
		runlet.AssistantText("seen"),
	}}
	body := chatBody(t, m, req, false)
	msgs, _ := json.Marshal(body["messages"])
	want := `[{"content":"look","role":"user"},` +
		`{"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"shot"},"id":"call_1","type":"function"},{"function":{"arguments":"{}","name":"plain"},"id":"call_2","type":"function"},{"function":{"arguments":"{}","name":"rec"},"id":"call_3","type":"function"}]},` +
		`{"content":"the screen\n\n[The attachments of the tool result for call call_1 follow in the next user message.]","role":"tool","tool_call_id":"call_1"},` +
		`{"content":"plain","role":"tool","tool_call_id":"call_2"},` +
		`{"content":"[The attachments of the tool result for call call_3 follow in the next user message.]","role":"tool","tool_call_id":"call_3"},` +
		`{"content":[{"text":"Attachments of the tool result for call call_1:","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw0KGgp4eA=="},"type":"image_url"},{"file":{"file_data":"data:application/pdf;base64,JVBERg==","filename":"r.pdf"},"type":"file"},` +
		`{"text":"Attachments of the tool result for call call_3:","type":"text"},{"input_audio":{"data":"SUQz","format":"mp3"},"type":"input_audio"}],"role":"user"},` +
		`{"content":"seen","role":"assistant"}]`
	var w any
	_ = json.Unmarshal([]byte(want), &w)
	wantJSON, _ := json.Marshal(w)
	if string(msgs) != string(wantJSON) {
		t.Errorf("messages:\n got  %s\n want %s", msgs, wantJSON)
	}
}

// An audio part the API cannot take (not wav or mp3, or by URL) is a typed
// ErrInvalidRequest; a wav user part goes as input_audio (it was dropped).
func TestChatAudio(t *testing.T) {
	m := NewChatCompletions(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "gpt-test"})
	for name, p := range map[string]runlet.Part{
		"ogg":    runlet.Audio("audio/ogg", []byte("OggS")),
		"by URL": runlet.AudioPart{URL: "https://example.test/a.wav", MediaType: "audio/wav"},
	} {
		for _, req := range []*runlet.ModelRequest{
			{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.Text("hear"), p}}}},
			{Messages: []runlet.Message{runlet.UserText("x"), {Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: "c", Parts: []runlet.Part{p}}}}}},
		} {
			if _, err := m.buildRequest(req, false); !errors.Is(err, runlet.ErrInvalidRequest) {
				t.Errorf("%s: err = %v", name, err)
			}
		}
	}
	body := chatBody(t, m, &runlet.ModelRequest{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.Text("hear"), runlet.Audio("audio/wav", []byte("RIFF"))}}}}, false)
	got, _ := json.Marshal(body["messages"])
	if !strings.Contains(string(got), `"input_audio":{"data":"UklGRg==","format":"wav"}`) {
		t.Errorf("messages = %s", got)
	}
}
