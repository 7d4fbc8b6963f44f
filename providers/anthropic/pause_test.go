package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// TestRuntimeContinuesPausedTurn runs a web search the API pauses
// (stop_reason pause_turn) through the runtime loop: the loop sends the
// paused response back as the last message of a second request, its
// server_tool_use and web_search_tool_result blocks byte-exact, and the
// run returns the answer of the response that finishes the turn.
func TestRuntimeContinuesPausedTurn(t *testing.T) {
	result := runlettest.AnthropicSearchResult{URL: "https://go.dev/doc/go1.26", Title: "Go 1.26 Release Notes", EncryptedContent: "Eo8B+/=="}
	search := runlettest.AnthropicWebSearch("srvtoolu_1", "go 1.26", result)
	for _, stream := range []bool{false, true} {
		name := "run"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			srv, m := newServerModel(t, Config{},
				runlettest.AnthropicResponse{Content: search, StopReason: "pause_turn", Usage: runlettest.AnthropicUsage{InputTokens: 10, OutputTokens: 5}},
				runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicCitedText("Go 1.26 is out.", result)},
					StopReason: "end_turn", Usage: runlettest.AnthropicUsage{InputTokens: 20, OutputTokens: 5}})
			agent := &runlet.Agent{Name: "a", Model: m, HostedTools: []runlet.HostedTool{runlet.WebSearch()}}
			rt := runlet.NewRuntime()
			var res *runlet.Result
			if stream {
				for ev, err := range rt.Stream(ctxTimeout(t), agent, "What changed in Go 1.26?") {
					if err != nil {
						t.Fatal(err)
					}
					if f, ok := ev.(*runlet.RunFinished); ok {
						res = f.Result
					}
				}
			} else {
				var err error
				if res, err = rt.Run(ctxTimeout(t), agent, "What changed in Go 1.26?"); err != nil {
					t.Fatal(err)
				}
			}
			if res == nil || res.Output != "Go 1.26 is out." || res.Turns != 2 || res.Usage.Requests != 2 {
				t.Fatalf("result %+v", res)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			var body struct {
				Messages []struct {
					Role    string            `json:"role"`
					Content []json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
				t.Fatal(err)
			}
			if n := len(body.Messages); n != 2 || body.Messages[0].Role != "user" || body.Messages[1].Role != "assistant" {
				t.Fatalf("continuation request's messages:\n%s", reqs[1].Body)
			}
			blocks := body.Messages[1].Content
			if len(blocks) != 2 || string(blocks[0]) != string(search[0].Raw) || string(blocks[1]) != string(search[1].Raw) {
				t.Fatalf("paused blocks sent back as\n%s\nwant\n%s\n%s", reqs[1].Body, search[0].Raw, search[1].Raw)
			}
			if !strings.Contains(string(reqs[1].Body), `"encrypted_content":"Eo8B+/=="`) {
				t.Fatalf("encrypted content lost:\n%s", reqs[1].Body)
			}
		})
	}
}
