package anthropic_test

import (
	"context"
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/runlettest"
)

func ExampleNewMessages() {
	// A fake Messages API on loopback stands in for api.anthropic.com; a
	// real program leaves BaseURL and APIKey empty to use $ANTHROPIC_API_KEY.
	srv := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{
		Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("Runlet is a small agent runtime for Go.")},
	})
	defer srv.Close()

	model := anthropic.NewMessages(anthropic.Config{
		BaseURL: srv.URL,
		APIKey:  "test-key",
		Model:   "claude-sonnet-4-5",
	})
	agent := &runlet.Agent{Name: "assistant", Instructions: "Be concise.", Model: model}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Introduce Runlet in one sentence.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	// Output: Runlet is a small agent runtime for Go.
}

func ExampleMessages_Stream() {
	srv := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{
		Content: []runlettest.AnthropicBlock{
			runlettest.AnthropicThinking("Short answer.", "sig"),
			runlettest.AnthropicText("Hello, world!"),
		},
		ChunkSize: 7, // deltas of at most 7 characters
	})
	defer srv.Close()
	model := anthropic.NewMessages(anthropic.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "claude-sonnet-4-5"})

	req := &runlet.ModelRequest{
		Messages: []runlet.Message{runlet.UserText("Say hello.")},
		Options:  map[string]any{"thinking": 1024}, // extended thinking, 1,024-token budget
	}
	for ev, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind {
		case runlet.StreamReasoningDelta:
			fmt.Printf("thinking %q\n", ev.Delta)
		case runlet.StreamTextDelta:
			fmt.Printf("text %q\n", ev.Delta)
		case runlet.StreamDone:
			fmt.Println("finish:", ev.Response.FinishReason)
		}
	}
	// Output:
	// thinking "Short a"
	// thinking "nswer."
	// text "Hello, "
	// text "world!"
	// finish: stop
}
