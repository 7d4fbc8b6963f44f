package pricing_test

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/pricing"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Each adapter reports cache reads and writes its own way on the wire; the
// cost of a call must be what the provider bills for those wire numbers,
// streamed or not. The expected costs are computed from the wire fields as
// each provider documents them, not from runlet.Usage.
func TestCachedTokensPerAdapter(t *testing.T) {
	prices := pricing.With(runlet.Prices{
		"gpt-test":    {Input: 2, CachedInput: 0.5, Output: 8},
		"gemini-test": {Input: 0.3, CachedInput: 0.03, Output: 2.5},
	})
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) runlet.Model
		want  float64
	}{
		{
			// Chat Completions: prompt_tokens includes
			// prompt_tokens_details.cached_tokens.
			name: "openai chat",
			model: func(t *testing.T) runlet.Model {
				srv := runlettest.NewOpenAIChatServer()
				t.Cleanup(srv.Close)
				for range 2 {
					srv.Enqueue(runlettest.OpenAIChatReply{Text: "ok", Usage: &runlettest.OpenAIChatUsage{PromptTokens: 1000, CachedTokens: 800, CompletionTokens: 50}})
				}
				return openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gpt-test"})
			},
			want: (200*2 + 800*0.5 + 50*8) / 1e6,
		},
		{
			// Responses: input_tokens includes
			// input_tokens_details.cached_tokens.
			name: "openai responses",
			model: func(t *testing.T) runlet.Model {
				srv := runlettest.NewOpenAIResponsesServer()
				t.Cleanup(srv.Close)
				for range 2 {
					srv.Enqueue(runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("ok")},
						Usage: runlettest.ResponsesUsage{InputTokens: 1000, CachedTokens: 800, OutputTokens: 50}})
				}
				return openai.NewResponses(openai.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gpt-test"})
			},
			want: (200*2 + 800*0.5 + 50*8) / 1e6,
		},
		{
			// Messages: input_tokens excludes cache_read_input_tokens and
			// cache_creation_input_tokens, each billed at its own price.
			// The dated ID the API reports finds the alias's price.
			name: "anthropic",
			model: func(t *testing.T) runlet.Model {
				srv := runlettest.NewAnthropicServer()
				t.Cleanup(srv.Close)
				for range 2 {
					srv.Enqueue(runlettest.AnthropicResponse{Model: "claude-haiku-4-5-20251001",
						Content: []runlettest.AnthropicBlock{{Type: "text", Text: "ok"}},
						Usage:   runlettest.AnthropicUsage{InputTokens: 100, CacheReadInputTokens: 800, CacheCreationInputTokens: 300, OutputTokens: 50}})
				}
				return anthropic.NewMessages(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "claude-haiku-4-5"})
			},
			want: (100*1 + 800*0.10 + 300*1.25 + 50*5) / 1e6,
		},
		{
			// Gemini: promptTokenCount includes cachedContentTokenCount;
			// thoughtsTokenCount is billed as output.
			name: "gemini",
			model: func(t *testing.T) runlet.Model {
				srv := runlettest.NewGeminiServer()
				t.Cleanup(srv.Close)
				for range 2 {
					srv.Enqueue(runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiText("ok")},
						Usage: &runlettest.GeminiUsage{PromptTokens: 1000, CachedTokens: 600, CandidatesTokens: 40, ThoughtsTokens: 10}})
				}
				return gemini.New(gemini.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gemini-test"})
			},
			want: (400*0.3 + 600*0.03 + 50*2.5) / 1e6,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &runlet.Agent{Model: tc.model(t)}
			rt := runlet.NewRuntime(runlet.WithPrices(prices))
			ctx := context.Background()
			res, err := rt.Run(ctx, agent, "hi")
			if err != nil {
				t.Fatal(err)
			}
			var streamed *runlet.Result
			for ev, err := range rt.Stream(ctx, agent, "hi") {
				if err != nil {
					t.Fatal(err)
				}
				if f, ok := ev.(*runlet.RunFinished); ok {
					streamed = f.Result
				}
			}
			for _, r := range []*runlet.Result{res, streamed} {
				if !r.Cost.Known() || math.Abs(r.Cost.Amount-tc.want) > 1e-12 {
					t.Errorf("cost %+v (usage %+v by model %v), want %v", r.Cost, r.Usage, r.UsageByModel, tc.want)
				}
			}
		})
	}
}

// A recorded OpenAI response that wrote the cache: prompt_tokens (4020)
// includes cache_write_tokens (4012), so 8 tokens are plain input.
func TestRecordedCacheWrite(t *testing.T) {
	body, err := os.ReadFile("testdata/pydantic-nonstream-cache-write-tokens.response.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Body: body})
	defer srv.Close()
	model := openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gpt-5.6-sol"})
	prices := runlet.Prices{"gpt-5.6-sol": {Input: 2, CacheWrite: 2.5, CachedInput: 0.2, Output: 10}} // test prices, not the real ones
	res, err := runlet.NewRuntime(runlet.WithPrices(prices)).Run(context.Background(), &runlet.Agent{Model: model}, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if want := (8*2 + 4012*2.5 + 4*10) / 1e6; math.Abs(res.Cost.Amount-want) > 1e-12 || !res.Cost.Known() {
		t.Fatalf("cost %+v, want %v (usage %+v)", res.Cost, want, res.Usage)
	}
}

// A compatible server that reports no model: the call is counted and
// priced under the model the request named, streamed or not.
func TestUnreportedModel(t *testing.T) {
	usage := `"usage":{"prompt_tokens":1000,"completion_tokens":10,"total_tokens":1010}`
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{Body: []byte(`{"id":"a","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],` + usage + `}`)},
		runlettest.OpenAIChatReply{Body: []byte("data: {\"id\":\"b\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: {\"id\":\"b\",\"choices\":[]," + usage + "}\n\ndata: [DONE]\n\n")},
	)
	defer srv.Close()
	agent := &runlet.Agent{Model: openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "local-model"})}
	rt := runlet.NewRuntime(runlet.WithPrices(runlet.Prices{"local-model": {Input: 1, Output: 1}}))
	ctx := context.Background()
	res, err := rt.Run(ctx, agent, "hi")
	if err != nil || res.UsageByModel["local-model"].Requests != 1 || !res.Cost.Known() {
		t.Fatalf("generate: %+v %v", res, err)
	}
	for ev, err := range rt.Stream(ctx, agent, "hi") {
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := ev.(*runlet.RunFinished); ok && (f.Result.UsageByModel["local-model"].Requests != 1 || math.Abs(f.Result.Cost.Amount-1010/1e6) > 1e-12) {
			t.Fatalf("stream: %+v", f.Result)
		}
	}
}

func TestTable(t *testing.T) {
	if len(pricing.Sources) == 0 || pricing.Date == "" {
		t.Fatal("the table must state its date and sources")
	}
	for model, p := range pricing.Table {
		if p.Input <= 0 || p.Output <= 0 || p.CachedInput <= 0 || p.CacheWrite <= 0 {
			t.Errorf("%s: every price of a built-in entry is stated: %+v", model, p)
		}
	}
	if _, ok := pricing.Table.Price("claude-haiku-4-5-20251001"); !ok {
		t.Error("a dated ID finds its alias's price")
	}
	mine := pricing.With(runlet.Prices{"claude-haiku-4-5": {Input: 9, Output: 9}, "local": {}})
	if mine["claude-haiku-4-5"].Input != 9 || pricing.Table["claude-haiku-4-5"].Input == 9 || len(mine) != len(pricing.Table)+1 {
		t.Errorf("With must override a copy: %+v", mine)
	}
}
