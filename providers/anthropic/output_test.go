package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

type invoice struct {
	Number   string   `json:"number" jsonschema:"the invoice number"`
	Total    float64  `json:"total"`
	Count    uint8    `json:"count,omitempty"`
	Currency string   `json:"currency,omitempty"`
	Lines    []string `json:"lines,omitempty"`
}

const validInvoice = `{"number":"A-17","total":12.5,"lines":["tea","cake"]}`

func TestNativeModel(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-sonnet-4-5":          true,
		"claude-sonnet-4-5-20250929": true,
		"claude-haiku-4-5":           true,
		"claude-opus-4-1-20250805":   true,
		"claude-opus-4-7":            true,
		"claude-sonnet-5":            true,
		"claude-sonnet-4-20250514":   false,
		"claude-opus-4-0":            false,
		"claude-3-5-sonnet-20241022": false,
		"claude-3-7-sonnet-latest":   false,
		"my-proxy-alias":             true,
	} {
		if got := nativeModel(model); got != want {
			t.Errorf("%s: %v, want %v", model, got, want)
		}
	}
}

func TestNativeSchema(t *testing.T) {
	s := runlet.OutputFor[invoice]().Schema
	raw := nativeFor(s)
	if raw == nil {
		t.Fatal("an inferred struct schema does not fit")
	}
	if strings.Contains(string(raw), "minimum") || strings.Contains(string(raw), "maximum") || !strings.Contains(string(raw), `"additionalProperties":false`) {
		t.Fatalf("fitted schema = %s", raw)
	}
	if _, ok := nativeSchema(runlet.OutputFor[map[string]int]().Schema, 0); ok {
		t.Error("a map fits")
	}
	if _, ok := nativeSchema(&jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Ref: "#/$defs/n"}}}, 0); ok {
		t.Error("a $ref fits")
	}
	m := NewMessages(Config{Model: "claude-sonnet-4-5"})
	if got := m.OutputMode(&runlet.OutputSchema{Schema: runlet.OutputFor[map[string]int]().Schema}); got != runlet.OutputTool {
		t.Errorf("map schema: %s", got)
	}
}

func TestOutputE2E(t *testing.T) {
	weather := runlet.NewTool("weather", "Weather.", func(context.Context, struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny", nil
	})
	for _, model := range []string{"claude-sonnet-4-5", "claude-3-5-haiku-latest"} {
		native := model == "claude-sonnet-4-5"
		// answer is how the model gives the answer text in its mode.
		answer := func(text string) runlettest.AnthropicResponse {
			if native {
				return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText(text)}}
			}
			return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicToolUse("", "final_answer", text)}}
		}
		for _, streamed := range []bool{false, true} {
			name := model
			if streamed {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				run := func(t *testing.T, tools []runlet.Tool, replies ...runlettest.AnthropicResponse) (*runlet.TypedResult[invoice], []runlettest.WireRequest, []invoice, error) {
					srv := runlettest.NewAnthropicServer(replies...)
					defer srv.Close()
					srv.ChunkSize = 3
					agent := &runlet.Agent{Name: "x", Tools: tools, Model: NewMessages(Config{BaseURL: srv.URL, APIKey: "k", Model: model})}
					var partials []invoice
					if streamed {
						s := runlet.StreamAs[invoice](context.Background(), runlet.NewRuntime(), agent, "text", runlet.WithOutputRetries(1))
						for v := range s.Partials() {
							partials = append(partials, v)
						}
						res, err := s.Result()
						return res, srv.Requests(), partials, err
					}
					res, err := runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "text", runlet.WithOutputRetries(1))
					return res, srv.Requests(), nil, err
				}

				t.Run("valid", func(t *testing.T) {
					res, reqs, partials, err := run(t, nil, answer(validInvoice))
					if err != nil || res.Value.Total != 12.5 || res.Output != validInvoice {
						t.Fatalf("res %+v err %v", res, err)
					}
					body := reqs[0].JSON()
					oc, _ := body["output_config"].(map[string]any)
					if native != (oc["format"] != nil) || native != (body["tool_choice"] == nil) {
						t.Fatalf("request: output_config %v tool_choice %v", oc, body["tool_choice"])
					}
					if !native {
						tc, _ := json.Marshal(body["tool_choice"])
						if string(tc) != `{"name":"final_answer","type":"tool"}` {
							t.Fatalf("tool_choice %s", tc)
						}
					}
					if streamed && (len(partials) < 4 || partials[len(partials)-1].Total != 12.5) {
						t.Fatalf("partials %+v", partials)
					}
				})

				t.Run("repaired", func(t *testing.T) {
					res, reqs, _, err := run(t, nil, answer(`{"number":"A-17","total":"x"}`), answer(validInvoice))
					if err != nil || res.Value.Number != "A-17" || len(reqs) != 2 {
						t.Fatalf("res %+v err %v", res, err)
					}
					if !strings.Contains(string(reqs[1].Body), "does not match the schema") {
						t.Fatalf("second request %s", reqs[1].Body)
					}
				})

				t.Run("exhausted", func(t *testing.T) {
					_, reqs, _, err := run(t, nil, answer(`{}`), answer(`{"total":1}`))
					var oe *runlet.OutputError
					if !errors.As(err, &oe) || oe.Attempts != 2 || len(reqs) != 2 {
						t.Fatalf("err %v", err)
					}
				})

				t.Run("refusal", func(t *testing.T) {
					_, _, _, err := run(t, nil, runlettest.AnthropicResponse{
						Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("I won't do that.")}, StopReason: "refusal"})
					var re *runlet.RefusalError
					if !errors.As(err, &re) || re.Text != "I won't do that." {
						t.Fatalf("err %v", err)
					}
				})

				t.Run("tools then answer", func(t *testing.T) {
					res, reqs, _, err := run(t, []runlet.Tool{weather},
						runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicToolUse("", "weather", `{"city":"Paris"}`)}},
						answer(validInvoice))
					if err != nil || res.Value.Number != "A-17" {
						t.Fatalf("res %+v err %v", res, err)
					}
					if !native {
						tc, _ := json.Marshal(reqs[0].JSON()["tool_choice"])
						if string(tc) != `{"type":"any"}` {
							t.Fatalf("tool_choice %s", tc)
						}
					}
				})
			})
		}
	}
}

// Fallback across providers with different modes: DeepSeek (output tool)
// then Claude 4.5 (native) makes the run use the output tool, which both
// handle; the first fails, the second answers.
func TestOutputFallbackAcrossModes(t *testing.T) {
	chat := runlettest.NewOpenAIChatServer()
	defer chat.Close()
	chat.EnqueueReplies(runlettest.WireReply{Error: &runlettest.WireError{Status: 503, Type: "server_error", Message: "overloaded"}})
	claude := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{
		Content: []runlettest.AnthropicBlock{runlettest.AnthropicToolUse("", "final_answer", validInvoice)}})
	defer claude.Close()
	ds := openai.DeepSeek.Config("deepseek-chat")
	ds.BaseURL, ds.APIKey, ds.MaxRetries = chat.BaseURL(), "k", -1
	model := runlet.Fallback(openai.NewChatCompletions(ds), NewMessages(Config{BaseURL: claude.URL, APIKey: "k", Model: "claude-sonnet-4-5"}))

	var checked []*runlet.OutputChecked
	s := runlet.StreamAs[invoice](context.Background(), runlet.NewRuntime(), &runlet.Agent{Name: "x", Model: model}, "text")
	for ev := range s.Events() {
		if c, ok := ev.(*runlet.OutputChecked); ok {
			checked = append(checked, c)
		}
	}
	res, err := s.Result()
	if err != nil || res.Value.Number != "A-17" {
		t.Fatalf("res %+v err %v", res, err)
	}
	if len(checked) != 1 || checked[0].Mode != runlet.OutputTool {
		t.Fatalf("checks %+v", checked)
	}
	if len(chat.Requests()) != 1 || !strings.Contains(string(chat.Requests()[0].Body), `"final_answer"`) {
		t.Fatalf("deepseek requests: %d", len(chat.Requests()))
	}
	if body := claude.Requests()[0].JSON(); body["output_config"] != nil || body["tool_choice"] == nil {
		t.Fatalf("claude request: %s", claude.Requests()[0].Body)
	}
}
