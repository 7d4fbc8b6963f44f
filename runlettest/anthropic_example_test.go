package runlettest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/runlettest"
)

func ExampleNewAnthropicServer() {
	// Two scripted turns: thinking and a tool call, then the answer.
	srv := runlettest.NewAnthropicServer(
		runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{
			runlettest.AnthropicThinking("I should look it up.", "sig-1"),
			runlettest.AnthropicToolUse("toolu_1", "lookup", `{"q":"capital of France"}`),
		}, ChunkSize: 4},
		runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("Paris.")}},
	)
	defer srv.Close()
	// The first request fails with 529 Overloaded; the adapter retries it
	// after the Retry-After-Ms the server asks for.
	srv.InjectFault(runlettest.Fault{
		Status: 529,
		Header: http.Header{"Retry-After-Ms": {"10"}},
		Body:   `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	})

	model := anthropic.NewMessages(anthropic.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "claude-sonnet-4-5"})
	req := &runlet.ModelRequest{
		Messages: []runlet.Message{runlet.UserText("What is the capital of France?")},
		Tools:    []runlet.ToolSpec{{Name: "lookup"}},
		Options:  map[string]any{"thinking": 1024},
	}
	ctx := context.Background()
	resp, err := modelkit.Collect(model.Stream(ctx, req))
	if err != nil {
		fmt.Println(err)
		return
	}
	call := resp.Message.ToolCalls()[0]
	fmt.Println("turn 1:", resp.FinishReason, call.Name, string(call.Arguments))

	req.Messages = append(req.Messages, resp.Message, runlet.Message{Role: runlet.RoleTool,
		Parts: []runlet.Part{runlet.ToolResultPart{CallID: call.ID, Content: "Paris"}}})
	resp, err = model.Generate(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("turn 2:", resp.Message.Text())

	// The server recorded every request, the failed one included.
	reqs := srv.Requests()
	var body struct {
		Messages []struct {
			Role    string
			Content []struct{ Type, Signature string }
		}
	}
	_ = json.Unmarshal(reqs[2].Body, &body)
	fmt.Println("requests:", len(reqs), "api key:", reqs[2].Header.Get("X-Api-Key"))
	for _, m := range body.Messages {
		for _, c := range m.Content {
			fmt.Println(strings.TrimSpace("  " + m.Role + " " + c.Type + " " + c.Signature))
		}
	}

	// Output:
	// turn 1: tool_calls lookup {"q":"capital of France"}
	// turn 2: Paris.
	// requests: 3 api key: test-key
	// user text
	// assistant thinking sig-1
	// assistant tool_use
	// user tool_result
}
