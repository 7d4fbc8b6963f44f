package modeltest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit/modeltest"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// newModel is what a provider's conformance test hands the suite: its
// model, configured with what the suite serves. The test itself is one
// line:
//
//	func TestConformance(t *testing.T) { modeltest.Run(t, modeltest.OpenAIChatWire, newModel) }
func newModel(t *testing.T, s modeltest.Server) runlet.Model {
	return openai.NewChatCompletions(openai.Config{
		BaseURL: s.BaseURL, APIKey: s.APIKey, HTTPClient: s.HTTPClient,
		MaxResponseBytes: s.MaxResponseBytes,
		MaxRetries:       -1, // the suite injects one fault per request
		Model:            "gpt-test",
	})
}

// The model the suite checks is an ordinary one, talking to a fake server
// of its wire: here one exchange, as the suite's Agree check makes it.
func Example() {
	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	srv.RequireAPIKey("sk-example")
	srv.EnqueueReplies(runlettest.WireReply{Text: "Hello!", Usage: &runlettest.WireUsage{InputTokens: 3, OutputTokens: 2}})

	m := newModel(nil, modeltest.Server{BaseURL: srv.BaseURL(), APIKey: "sk-example", HTTPClient: http.DefaultClient, MaxResponseBytes: 1 << 20})
	resp, err := m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("Hi")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Text(), resp.FinishReason, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output: Hello! stop 3 2
}
