package anthropic

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Turn 1 of a tool run with extended thinking: redacted and readable
// thinking, text, then a tool call. The thinking text and signature hold
// characters JSON encoders like to escape, to show they go back unchanged.
const (
	turn1Thinking  = "The user wants the weather in <Paris> & \"now\"; call get_weather. 🌧\nDone."
	turn1Signature = "ErUBCkYIBxgCIkB/sig+with/slashes==" // base64 alphabet: '+' and '/'
	turn1Redacted  = "EmwKAhgBEgy3redacted+data/=="
)

func turn1() runlettest.AnthropicResponse {
	return runlettest.AnthropicResponse{
		Content: []runlettest.AnthropicBlock{
			runlettest.AnthropicRedactedThinking(turn1Redacted),
			runlettest.AnthropicThinking(turn1Thinking, turn1Signature),
			runlettest.AnthropicText("Let me check."),
			runlettest.AnthropicToolUse("toolu_01A", "get_weather", `{"city":"Paris"}`),
		},
		Usage:     runlettest.AnthropicUsage{InputTokens: 50, OutputTokens: 60},
		ChunkSize: 3,
	}
}

func turn2() runlettest.AnthropicResponse {
	return runlettest.AnthropicResponse{
		Content: []runlettest.AnthropicBlock{
			runlettest.AnthropicThinking("It is sunny.", "sig-2"),
			runlettest.AnthropicText("It is sunny in Paris."),
		},
		Usage: runlettest.AnthropicUsage{InputTokens: 80, OutputTokens: 10},
	}
}

// wantAssistantTurn1 is how turn 1's assistant message must come back in
// turn 2's request: every block as received, thinking text and signature
// byte for byte.
const wantAssistantTurn1 = `{"role":"assistant","content":[
	{"type":"redacted_thinking","data":"` + turn1Redacted + `"},
	{"type":"thinking","thinking":"The user wants the weather in <Paris> & \"now\"; call get_weather. 🌧\nDone.","signature":"` + turn1Signature + `"},
	{"type":"text","text":"Let me check."},
	{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris"}}]}`

// checkTurn2 asserts on the second request the fake server received.
func checkTurn2(t *testing.T, srv *runlettest.AnthropicServer, wantToolResult string) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Thinking json.RawMessage   `json:"thinking"`
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("turn 2 has %d messages: %s", len(body.Messages), reqs[1].Body)
	}
	if !jsonEqual(t, body.Messages[1], []byte(wantAssistantTurn1)) {
		t.Errorf("assistant turn sent back as\n%s\nwant\n%s", body.Messages[1], wantAssistantTurn1)
	}
	if !jsonEqual(t, body.Messages[2], []byte(wantToolResult)) {
		t.Errorf("tool result sent as\n%s\nwant\n%s", body.Messages[2], wantToolResult)
	}
	// Exactly as received: the decoded strings are identical.
	var blocks struct {
		Content []struct{ Thinking, Signature, Data string }
	}
	_ = json.Unmarshal(body.Messages[1], &blocks)
	if blocks.Content[0].Data != turn1Redacted || blocks.Content[1].Thinking != turn1Thinking || blocks.Content[1].Signature != turn1Signature {
		t.Errorf("thinking changed: %+v", blocks.Content[:2])
	}
	if !jsonEqual(t, body.Thinking, []byte(`{"type":"enabled","budget_tokens":2048}`)) {
		t.Errorf("thinking option %s", body.Thinking)
	}
}

// TestMultiTurnThinkingWithTools drives the adapter directly for two turns,
// appending the assistant message and the tool result itself.
func TestMultiTurnThinkingWithTools(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "generate"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			srv, m := newServerModel(t, Config{}, turn1(), turn2())
			call := func(req *runlet.ModelRequest) *runlet.ModelResponse {
				t.Helper()
				var resp *runlet.ModelResponse
				var err error
				if stream {
					_, resp, err = collect(t, m.Stream(ctxTimeout(t), req))
				} else {
					resp, err = m.Generate(ctxTimeout(t), req)
				}
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			req := &runlet.ModelRequest{
				Instructions: "Use tools.",
				Messages:     []runlet.Message{runlet.UserText("Weather in Paris?")},
				Tools:        []runlet.ToolSpec{{Name: "get_weather", Description: "Weather for a city."}},
				Options:      map[string]any{"thinking": 2048},
			}
			resp := call(req)
			want := []runlet.Part{
				runlet.ReasoningPart{Encrypted: turn1Redacted, Provider: "anthropic"},
				runlet.ReasoningPart{Text: turn1Thinking, Signature: turn1Signature, Provider: "anthropic"},
				runlet.TextPart{Text: "Let me check."},
				runlet.ToolCallPart{ID: "toolu_01A", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}
			if !reflect.DeepEqual(resp.Message.Parts, want) || resp.FinishReason != runlet.FinishToolCalls {
				t.Fatalf("turn 1: %#v", resp)
			}

			// The runtime would store the message as JSON; do the same.
			stored, err := json.Marshal(resp.Message)
			if err != nil {
				t.Fatal(err)
			}
			var assistant runlet.Message
			if err := json.Unmarshal(stored, &assistant); err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages, assistant, runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{
				runlet.ToolResultPart{CallID: "toolu_01A", Name: "get_weather", Content: "sunny, 21°C"},
			}})
			resp = call(req)
			if resp.Message.Text() != "It is sunny in Paris." || resp.FinishReason != runlet.FinishStop {
				t.Fatalf("turn 2: %#v", resp)
			}
			checkTurn2(t, srv, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":"sunny, 21°C"}]}`)
		})
	}
}

type weatherIn struct {
	City string `json:"city"`
}

// TestRuntimeThinkingWithTools runs the same exchange through the runtime
// loop, which executes the tool and sends turn 1 back itself.
func TestRuntimeThinkingWithTools(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "run"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			srv, m := newServerModel(t, Config{}, turn1(), turn2())
			weather := runlet.NewTool("get_weather", "Weather for a city.", func(ctx context.Context, in weatherIn) (string, error) {
				return "sunny in " + in.City, nil
			})
			agent := &runlet.Agent{
				Name:         "weather",
				Instructions: "Use tools.",
				Model:        m,
				Tools:        []runlet.Tool{weather},
				Options:      map[string]any{"thinking": 2048},
			}
			rt := runlet.NewRuntime()
			var res *runlet.Result
			if stream {
				var text string
				for ev, err := range rt.Stream(ctxTimeout(t), agent, "Weather in Paris?") {
					if err != nil {
						t.Fatal(err)
					}
					switch ev := ev.(type) {
					case *runlet.TextDelta:
						text += ev.Delta
					case *runlet.RunFinished:
						res = ev.Result
					}
				}
				if text != "Let me check.It is sunny in Paris." {
					t.Errorf("streamed text %q", text)
				}
			} else {
				var err error
				if res, err = rt.Run(ctxTimeout(t), agent, "Weather in Paris?"); err != nil {
					t.Fatal(err)
				}
			}
			if res == nil || res.Output != "It is sunny in Paris." || res.Turns != 2 || res.Usage.InputTokens != 130 {
				t.Fatalf("result %+v", res)
			}
			checkTurn2(t, srv, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":"sunny in Paris"}]}`)
		})
	}
}
