package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

type invoice struct {
	Number   string   `json:"number" jsonschema:"the invoice number"`
	Total    float64  `json:"total"`
	Currency string   `json:"currency,omitempty"`
	Lines    []string `json:"lines,omitempty"`
}

// What a strict model sends: every property, null for the optional ones.
const strictInvoice = `{"number":"A-17","total":12.5,"currency":null,"lines":["tea","cake"]}`

// outputBackend is one OpenAI wire API behind its fake server.
type outputBackend struct {
	name    string
	schema  string // OpenAPI request schema
	model   func(cfg openai.Config) runlet.Model
	server  func() (baseURL string, enqueue func(...runlettest.WireReply), refuse func(string), bodies func() [][]byte, closeFn func())
	formatt func(body map[string]any) map[string]any // the json_schema object of a request body
}

func outputBackends() []outputBackend {
	return []outputBackend{
		{
			name: "chat", schema: "CreateChatCompletionRequest",
			model: func(cfg openai.Config) runlet.Model { return openai.NewChatCompletions(cfg) },
			server: func() (string, func(...runlettest.WireReply), func(string), func() [][]byte, func()) {
				srv := runlettest.NewOpenAIChatServer()
				srv.ChunkSize = 3
				return srv.BaseURL(), srv.EnqueueReplies,
					func(text string) { srv.Enqueue(runlettest.OpenAIChatReply{Refusal: text}) },
					func() [][]byte { return bodiesOf(srv.Requests()) }, srv.Close
			},
			formatt: func(body map[string]any) map[string]any {
				rf, _ := body["response_format"].(map[string]any)
				js, _ := rf["json_schema"].(map[string]any)
				return js
			},
		},
		{
			name: "responses", schema: "CreateResponse",
			model: func(cfg openai.Config) runlet.Model { return openai.NewResponses(cfg) },
			server: func() (string, func(...runlettest.WireReply), func(string), func() [][]byte, func()) {
				srv := runlettest.NewOpenAIResponsesServer()
				srv.ChunkSize = 3
				return srv.BaseURL(), srv.EnqueueReplies,
					func(text string) {
						srv.Enqueue(runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesRefusal(text)}})
					},
					func() [][]byte { return bodiesOf(srv.Requests()) }, srv.Close
			},
			formatt: func(body map[string]any) map[string]any {
				text, _ := body["text"].(map[string]any)
				f, _ := text["format"].(map[string]any)
				return f
			},
		},
	}
}

func bodiesOf(reqs []runlettest.WireRequest) [][]byte {
	out := make([][]byte, len(reqs))
	for i, r := range reqs {
		out[i] = r.Body
	}
	return out
}

func TestOutputE2E(t *testing.T) {
	weather := runlet.NewTool("weather", "Weather.", func(ctx context.Context, in cityArgs) (string, error) { return "sunny", nil })
	for _, b := range outputBackends() {
		for _, streamed := range []bool{false, true} {
			name := b.name
			if streamed {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				run := func(t *testing.T, tools []runlet.Tool, script func(enqueue func(...runlettest.WireReply), refuse func(string)), opts ...runlet.RunOption) (*runlet.TypedResult[invoice], [][]byte, []invoice, error) {
					base, enqueue, refuse, bodies, closeFn := b.server()
					defer closeFn()
					script(enqueue, refuse)
					agent := &runlet.Agent{Name: "x", Instructions: "Extract the invoice.", Tools: tools,
						Model: b.model(openai.Config{BaseURL: base, APIKey: "sk-test", Model: "gpt-4o-mini"})}
					var res *runlet.TypedResult[invoice]
					var err error
					var partials []invoice
					if streamed {
						s := runlet.StreamAs[invoice](context.Background(), runlet.NewRuntime(), agent, "the text", opts...)
						for v := range s.Partials() {
							partials = append(partials, v)
						}
						res, err = s.Result()
					} else {
						res, err = runlet.RunAs[invoice](context.Background(), runlet.NewRuntime(), agent, "the text", opts...)
					}
					for _, body := range bodies() {
						openapitest.Validate(t, b.schema, body)
					}
					return res, bodies(), partials, err
				}

				t.Run("valid", func(t *testing.T) {
					res, bodies, partials, err := run(t, nil, func(enqueue func(...runlettest.WireReply), _ func(string)) {
						enqueue(runlettest.WireReply{Text: strictInvoice})
					})
					if err != nil {
						t.Fatal(err)
					}
					if res.Value.Number != "A-17" || res.Value.Total != 12.5 || len(res.Value.Lines) != 2 || res.Output != strictInvoice {
						t.Fatalf("value %+v output %s", res.Value, res.Output)
					}
					var body map[string]any
					_ = json.Unmarshal(bodies[0], &body)
					f := b.formatt(body)
					if f["strict"] != true || f["name"] != "invoice" {
						t.Fatalf("format = %v", f)
					}
					sch := f["schema"].(map[string]any)
					req, _ := json.Marshal(sch["required"])
					cur, _ := json.Marshal(sch["properties"].(map[string]any)["currency"])
					if string(req) != `["currency","lines","number","total"]` || string(cur) != `{"type":["string","null"]}` {
						t.Fatalf("strict schema: required %s currency %s", req, cur)
					}
					if streamed && (len(partials) < 4 || partials[len(partials)-1].Total != 12.5) {
						t.Fatalf("partials = %+v", partials)
					}
				})

				t.Run("repaired", func(t *testing.T) {
					res, bodies, _, err := run(t, nil, func(enqueue func(...runlettest.WireReply), _ func(string)) {
						enqueue(runlettest.WireReply{Text: `{"number":"A-17"}`}, runlettest.WireReply{Text: strictInvoice})
					})
					if err != nil || res.Value.Total != 12.5 || res.Turns != 2 {
						t.Fatalf("res %+v err %v", res, err)
					}
					if !strings.Contains(string(bodies[1]), "Your answer was rejected") {
						t.Fatalf("second request lacks the repair message: %s", bodies[1])
					}
				})

				t.Run("exhausted", func(t *testing.T) {
					_, bodies, _, err := run(t, nil, func(enqueue func(...runlettest.WireReply), _ func(string)) {
						enqueue(runlettest.WireReply{Text: "nope"}, runlettest.WireReply{Text: "still nope"})
					}, runlet.WithOutputRetries(1))
					var oe *runlet.OutputError
					if !errors.As(err, &oe) || oe.Raw != "still nope" || len(bodies) != 2 {
						t.Fatalf("err = %v, %d requests", err, len(bodies))
					}
				})

				t.Run("refusal", func(t *testing.T) {
					_, _, _, err := run(t, nil, func(_ func(...runlettest.WireReply), refuse func(string)) {
						refuse("I can't help with that.")
					})
					var re *runlet.RefusalError
					if !errors.As(err, &re) || re.Text != "I can't help with that." {
						t.Fatalf("err = %v", err)
					}
				})

				t.Run("tools then answer", func(t *testing.T) {
					res, _, _, err := run(t, []runlet.Tool{weather}, func(enqueue func(...runlettest.WireReply), _ func(string)) {
						enqueue(runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "weather", Arguments: `{"city":"Paris"}`}}},
							runlettest.WireReply{Text: strictInvoice})
					})
					if err != nil || res.Value.Number != "A-17" || res.Turns != 2 {
						t.Fatalf("res %+v err %v", res, err)
					}
				})

				t.Run("tool mode", func(t *testing.T) {
					res, bodies, partials, err := run(t, []runlet.Tool{weather}, func(enqueue func(...runlettest.WireReply), _ func(string)) {
						enqueue(runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "final_answer", Arguments: `{"number":1}`}}},
							runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "final_answer", Arguments: strictInvoice}}})
					}, runlet.WithOutputMode(runlet.OutputTool))
					if err != nil || res.Value.Number != "A-17" || res.Output != strictInvoice {
						t.Fatalf("res %+v err %v", res, err)
					}
					var body map[string]any
					_ = json.Unmarshal(bodies[0], &body)
					if body["response_format"] != nil || b.formatt(body) != nil || body["tool_choice"] != "required" {
						t.Fatalf("tool mode request: %s", bodies[0])
					}
					if !strings.Contains(string(bodies[1]), "does not match the schema") {
						t.Fatalf("no repair result in %s", bodies[1])
					}
					if streamed && len(partials) < 3 {
						t.Fatalf("partials = %+v", partials)
					}
				})
			})
		}
	}
}

// Presets without response_format json_schema use the output tool.
func TestOutputModePresets(t *testing.T) {
	s := runlet.OutputFor[invoice]()
	for _, c := range []struct {
		cfg  openai.Config
		want runlet.OutputMode
	}{
		{openai.Config{Model: "gpt-4o-mini"}, runlet.OutputNative},
		{openai.Config{Model: "gpt-3.5-turbo"}, runlet.OutputTool},
		{openai.Config{Model: "gpt-4"}, runlet.OutputTool},
		{openai.Ollama.Config("qwen3"), runlet.OutputNative},
		{openai.VLLM.Config("m"), runlet.OutputNative},
		{openai.DeepSeek.Config("deepseek-chat"), runlet.OutputTool},
		{openai.DashScope.Config("qwen-plus"), runlet.OutputTool},
		{openai.OpenRouter.Config("x/y"), runlet.OutputTool},
	} {
		if got := openai.NewChatCompletions(c.cfg).OutputMode(s); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.cfg.Name, c.cfg.Model, got, c.want)
		}
	}
	if got := openai.NewResponses(openai.Config{Model: "gpt-3.5-turbo"}).OutputMode(s); got != runlet.OutputNative {
		t.Errorf("responses: %s", got)
	}
}
