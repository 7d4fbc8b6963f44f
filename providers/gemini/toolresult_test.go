package gemini

import (
	"encoding/json"
	"testing"

	"github.com/runlet/runlet"
)

// A tool result's media go inside its functionResponse as "parts" of
// inlineData for Gemini 3 (multimodal function responses); media by URL,
// audio, and every medium for earlier models go as parts of their own
// after the turn's function responses; the text stays in response.output.
func TestToolResultParts(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nxx")
	res := runlet.ToolResultPart{CallID: "c1", Name: "shot", Content: "the screen", Parts: []runlet.Part{
		runlet.Text("the screen"),
		runlet.Image("image/png", png),
		runlet.File("r.pdf", "application/pdf", []byte("%PDF")),
		runlet.ImageURL("https://example.test/a.png"),
		runlet.Audio("audio/wav", []byte("RIFF")),
	}}
	req := &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("look"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{
			runlet.ToolCallPart{ID: "c1", Name: "shot", Arguments: json.RawMessage(`{}`)},
			runlet.ToolCallPart{ID: "c2", Name: "plain", Arguments: json.RawMessage(`{}`)},
		}},
		{Role: runlet.RoleTool, Parts: []runlet.Part{res, runlet.ToolResultPart{CallID: "c2", Name: "plain", Content: "ok"}}},
	}}
	const (
		img   = `{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgp4eA=="}}`
		pdf   = `{"inlineData":{"mimeType":"application/pdf","data":"JVBERg=="}}`
		url   = `{"fileData":{"fileUri":"https://example.test/a.png"}}`
		audio = `{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}`
		plain = `{"functionResponse":{"id":"c2","name":"plain","response":{"output":"ok"}}}`
	)
	for model, want := range map[string]string{
		"gemini-3-pro-preview": `{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"shot","response":{"output":"the screen"},"parts":[` + img + `,` + pdf + `]}},` + plain + `,` + url + `,` + audio + `]}`,
		"gemini-2.5-flash":     `{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"shot","response":{"output":"the screen"}}},` + plain + `,` + img + `,` + pdf + `,` + url + `,` + audio + `]}`,
	} {
		_, body := build(t, Config{Model: model}, req, false)
		var got struct {
			Contents []json.RawMessage `json:"contents"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Contents[2]) != want {
			t.Errorf("%s:\n got  %s\n want %s", model, got.Contents[2], want)
		}
	}
	// An audio part in a user message is sent (it was dropped).
	_, body := build(t, Config{Model: "gemini-2.5-flash"}, &runlet.ModelRequest{Messages: []runlet.Message{{Role: runlet.RoleUser, Parts: []runlet.Part{runlet.Text("hear"), runlet.Audio("audio/wav", []byte("RIFF"))}}}}, false)
	var got struct {
		Contents []json.RawMessage `json:"contents"`
	}
	_ = json.Unmarshal(body, &got)
	if want := `{"role":"user","parts":[{"text":"hear"},` + audio + `]}`; string(got.Contents[0]) != want {
		t.Errorf("user audio:\n got  %s\n want %s", got.Contents[0], want)
	}
}
