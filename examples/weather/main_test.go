package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func TestWeatherReplay(t *testing.T) {
	var out, errs strings.Builder
	if err := run(t.Context(), "", options{}, func(string) string { return "" }, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The capital of the UK is London.\n" {
		t.Errorf("stdout = %q", out.String())
	}
	for _, want := range []string{"replaying a recorded session", `→ get_capital {"country":"UK"}`, "← London", "2 model calls, 131 input + 24 output tokens"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, errs.String())
		}
	}
}

// Live, against a fake OpenAI server: the two tools chain.
func TestWeatherLive(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "get_capital", Arguments: `{"country":"Japan"}`}}},
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
		runlettest.OpenAIChatReply{Text: "Clear, 21°C in Tokyo."},
	)
	defer srv.Close()
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "test"}
	var out, errs strings.Builder
	// The adapter reads the environment itself.
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL())
	t.Setenv("OPENAI_API_KEY", "test")
	if err := run(t.Context(), "Weather in the capital of Japan?", options{events: true}, func(k string) string { return env[k] }, &out, &errs); err != nil {
		t.Fatal(err)
	}
	var last runlet.Event
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		ev, err := runlet.UnmarshalEvent([]byte(line))
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		last = ev
	}
	fin, ok := last.(*runlet.RunFinished)
	if !ok || fin.Result.Output != "Clear, 21°C in Tokyo." || fin.Result.Turns != 3 {
		t.Fatalf("last event = %#v", last)
	}
	tool := fin.Result.Messages[4] // user, call, result, call, result
	var f Forecast
	if err := json.Unmarshal([]byte(tool.Parts[0].(runlet.ToolResultPart).Content), &f); err != nil || f.TempC != 21 {
		t.Errorf("weather result = %+v, %v", tool, err)
	}
}

// Every adapter by flag, each against its fake server: the tools chain the
// same way whatever the wire protocol.
func TestWeatherProviderFlag(t *testing.T) {
	chat := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "get_capital", Arguments: `{"country":"France"}`}}},
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		runlettest.OpenAIChatReply{Text: "Sunny, 18°C in Paris."},
	)
	defer chat.Close()
	resp := runlettest.NewOpenAIResponsesServer(
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesFunctionCall("get_capital", `{"country":"France"}`)}},
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesFunctionCall("get_weather", `{"city":"Paris"}`)}},
		runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("Sunny, 18°C in Paris.")}},
	)
	defer resp.Close()
	anth := runlettest.NewAnthropicServer(
		runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicToolUse("t1", "get_capital", `{"country":"France"}`)}},
		runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicToolUse("t2", "get_weather", `{"city":"Paris"}`)}},
		runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("Sunny, 18°C in Paris.")}},
	)
	defer anth.Close()
	gem := runlettest.NewGeminiServer()
	defer gem.Close()
	gem.EnqueueReplies(
		runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "get_capital", Arguments: `{"country":"France"}`}}},
		runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		runlettest.WireReply{Text: "Sunny, 18°C in Paris."},
	)
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("ANTHROPIC_API_KEY", "test")
	t.Setenv("GEMINI_API_KEY", "test")
	for _, tc := range []struct{ provider, base string }{
		{"openai", chat.BaseURL()},
		{"openai-responses", resp.BaseURL()},
		{"anthropic", anth.URL},
		{"gemini", gem.BaseURL()},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			var out, errs strings.Builder
			o := options{provider: tc.provider, baseURL: tc.base, model: "m"}
			if err := run(t.Context(), "Weather in the capital of France?", o, func(string) string { return "" }, &out, &errs); err != nil {
				t.Fatal(err)
			}
			if out.String() != "Sunny, 18°C in Paris.\n" || !strings.Contains(errs.String(), `→ get_weather {"city":"Paris"}`) {
				t.Fatalf("stdout %q stderr %q", out.String(), errs.String())
			}
		})
	}
	if err := run(t.Context(), "x", options{provider: "nope"}, func(string) string { return "" }, &strings.Builder{}, &strings.Builder{}); err == nil {
		t.Fatal("unknown provider accepted")
	}
}
