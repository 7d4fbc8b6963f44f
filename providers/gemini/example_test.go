package gemini_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/runlettest"
)

func ExampleNew() {
	// A fake Gemini API on loopback stands in for
	// generativelanguage.googleapis.com; a real program leaves BaseURL and
	// APIKey empty to use $GEMINI_API_KEY.
	srv := runlettest.NewGeminiServer(runlettest.GeminiResponse{
		Parts: []runlettest.GeminiPart{runlettest.GeminiText("Runlet is a small agent runtime for Go.")},
	})
	defer srv.Close()

	model := gemini.New(gemini.Config{BaseURL: srv.BaseURL(), APIKey: "test-key", Model: "gemini-2.5-flash"})
	agent := &runlet.Agent{Name: "assistant", Instructions: "Be concise.", Model: model}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Introduce Runlet in one sentence.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	// Output: Runlet is a small agent runtime for Go.
}

func ExampleModel_Stream() {
	srv := runlettest.NewGeminiServer(runlettest.GeminiResponse{
		Parts: []runlettest.GeminiPart{
			runlettest.GeminiThought("Short answer.", "c2lnbmF0dXJl"),
			runlettest.GeminiText("Hello, world!"),
		},
	})
	defer srv.Close()

	model := gemini.New(gemini.Config{BaseURL: srv.BaseURL(), APIKey: "test-key", Model: "gemini-3-flash-preview"})
	req := &runlet.ModelRequest{
		Messages: []runlet.Message{runlet.UserText("Say hello.")},
		Options:  map[string]any{"include_thoughts": true, "thinking_level": "low"},
	}
	for ev, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind == runlet.StreamDone {
			r := ev.Response.Message.Parts[0].(runlet.ReasoningPart)
			fmt.Printf("thought %q (signature %s), answer %q\n", r.Text, r.Signature, ev.Response.Message.Text())
		}
	}
	// Output: thought "Short answer." (signature c2lnbmF0dXJl), answer "Hello, world!"
}

// Vertex AI serves the same API under a project path, with an OAuth access
// token instead of an API key.
func ExampleConfig_vertexAI() {
	token := "ya29.example-token" // from `gcloud auth print-access-token` or golang.org/x/oauth2/google
	model := gemini.New(gemini.Config{
		BaseURL: "https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google",
		Headers: http.Header{"Authorization": {"Bearer " + token}},
		Model:   "gemini-2.5-flash",
	})
	fmt.Println(model.Name())
	// Output: gemini
}
