package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

type cityArgs struct {
	City string `json:"city" jsonschema:"the city"`
}

// The whole runtime over the real adapter and the fake wire server: a
// streamed run whose first turn asks for two parallel tool calls (their
// argument fragments interleaved and cut inside UTF-8 sequences), then
// answers from the results.
func TestChatE2EStreamedParallelTools(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{
			{ID: "call_a", Name: "weather", Arguments: `{"city":"Zürich"}`},
			{ID: "call_b", Name: "weather", Arguments: `{"city":"東京"}`},
		}, Usage: &runlettest.OpenAIChatUsage{PromptTokens: 50, CompletionTokens: 20}},
		runlettest.OpenAIChatReply{Text: "Zürich: sunny. 東京: rainy.", Usage: &runlettest.OpenAIChatUsage{PromptTokens: 90, CompletionTokens: 10}},
	)
	defer srv.Close()
	srv.Split, srv.ChunkSize, srv.InterleaveToolCalls = runlettest.ChatSplitBytes, 3, true

	var calls atomic.Int32
	weather := runlet.NewTool("weather", "Current weather for a city.", func(ctx context.Context, in cityArgs) (string, error) {
		calls.Add(1)
		if in.City == "Zürich" {
			return "sunny", nil
		}
		return "rainy", nil
	})
	agent := &runlet.Agent{
		Name:         "weather",
		Instructions: "Answer briefly.",
		Model:        openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "sk-test", Model: "gpt-4o-mini", HTTPClient: srv.Client()}),
		Tools:        []runlet.Tool{weather},
	}
	var (
		text     strings.Builder
		started  []string
		finished []string
		result   *runlet.Result
		argFrags = map[int]string{}
	)
	for ev, err := range runlet.NewRuntime().Stream(context.Background(), agent, "Weather in Zürich and Tokyo?") {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *runlet.TextDelta:
			text.WriteString(e.Delta)
		case *runlet.ToolCallDelta:
			argFrags[e.Index] += e.Delta
		case *runlet.ToolStarted:
			started = append(started, e.Call.ID)
		case *runlet.ToolFinished:
			finished = append(finished, e.Call.ID+"="+e.Result.Content)
		case *runlet.RunFinished:
			result = e.Result
		}
	}
	if result == nil || result.Status != runlet.StateFinished {
		t.Fatalf("result = %+v", result)
	}
	if text.String() != "Zürich: sunny. 東京: rainy." || result.Output != text.String() {
		t.Errorf("text %q output %q", text.String(), result.Output)
	}
	if argFrags[0] != `{"city":"Zürich"}` || argFrags[1] != `{"city":"東京"}` {
		t.Errorf("argument fragments joined: %v", argFrags)
	}
	slices.Sort(finished) // tools run concurrently: tool.finished comes in completion order
	if calls.Load() != 2 || len(started) != 2 || strings.Join(finished, ",") != "call_a=sunny,call_b=rainy" {
		t.Errorf("tools: started %v finished %v", started, finished)
	}
	want := runlet.Usage{InputTokens: 140, OutputTokens: 30, TotalTokens: 170}
	if got := result.Usage; got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens || got.TotalTokens != want.TotalTokens {
		t.Errorf("usage = %+v", got)
	}

	// The second request carries the assistant's tool calls and both
	// results, in the model's order, and is a valid request.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			Content    any    `json:"content"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Stream bool `json:"stream"`
	}
	for _, r := range reqs {
		openapitest.Validate(t, "CreateChatCompletionRequest", r.Body)
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role+":"+m.ToolCallID)
	}
	if strings.Join(roles, " ") != "system: user: assistant: tool:call_a tool:call_b" || !body.Stream {
		t.Errorf("second request messages: %v", roles)
	}
	if tc := body.Messages[2].ToolCalls; len(tc) != 2 || tc[0].Function.Arguments != `{"city":"Zürich"}` || tc[1].ID != "call_b" {
		t.Errorf("assistant tool calls: %+v", tc)
	}
	if body.Messages[3].Content != "sunny" || body.Messages[4].Content != "rainy" {
		t.Errorf("tool results: %v / %v", body.Messages[3].Content, body.Messages[4].Content)
	}
}

// A provider failure in the middle of a run fails it with the typed error
// and a partial result; breaking out of a run's stream stops it cleanly
// (the package's TestMain checks that no goroutine is left behind).
func TestChatE2EFailureAndBreak(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`}}},
		runlettest.OpenAIChatReply{Text: "partial answer that must not count", Error: &runlettest.OpenAIChatError{Type: "server_error", Message: "boom"}, ErrorAfter: 3},
		runlettest.OpenAIChatReply{Text: strings.Repeat("long answer ", 200)},
	)
	defer srv.Close()
	srv.ChunkSize = 2
	weather := runlet.NewTool("weather", "Weather.", func(ctx context.Context, in cityArgs) (string, error) { return "cold", nil })
	agent := &runlet.Agent{
		Model: openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "sk-test", Model: "m", HTTPClient: srv.Client(), MaxRetries: -1}),
		Tools: []runlet.Tool{weather},
	}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "Weather in Oslo?")
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.Type != "server_error" || res == nil || res.Status != runlet.StateFailed {
		t.Fatalf("err = %v, result %+v", err, res)
	}
	if strings.Contains(res.Output, "partial") {
		t.Errorf("partial text reached the output: %q", res.Output)
	}

	n := 0
	for ev, err := range runlet.NewRuntime().Stream(context.Background(), agent, "again") {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(*runlet.TextDelta); ok {
			if n++; n == 5 {
				break
			}
		}
	}
	if n != 5 {
		t.Fatalf("deltas = %d", n)
	}
}
