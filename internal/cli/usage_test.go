package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// --usage prints tokens and cost by model on stderr: a model of the
// built-in table is priced (its cache reads and writes at their own
// prices), any other says its cost is unknown until the config prices it.
func TestUsageFlag(t *testing.T) {
	usage := runlettest.AnthropicUsage{InputTokens: 100, CacheReadInputTokens: 800, CacheCreationInputTokens: 300, OutputTokens: 50}
	ant := runlettest.NewAnthropicServer(
		runlettest.AnthropicResponse{Model: "claude-haiku-4-5-20251001", Usage: usage,
			Content: []runlettest.AnthropicBlock{{Type: "tool_use", ID: "c1", Name: "calculator", Input: `{"expression":"6*7"}`}}},
		runlettest.AnthropicResponse{Model: "claude-haiku-4-5-20251001", Usage: usage,
			Content: []runlettest.AnthropicBlock{{Type: "text", Text: "42."}}},
	)
	defer ant.Close()
	r := runCLI(t, "", []string{"ANTHROPIC_API_KEY=k"}, "run", "--provider", "anthropic", "--base-url", ant.BaseURL(),
		"--model", "claude-haiku-4-5", "--tool", "calculator", "--quiet", "--usage", "What is 6*7?")
	// Per call: 100 input at $1, 800 cache reads at $0.10, 300 cache
	// writes at $1.25, 50 output at $5 per million: $0.000805.
	want := []string{
		"Usage by model:\n",
		"  claude-haiku-4-5-20251001  2 calls  2400 input (1600 cached, 600 cache write)  100 output  $0.00161\n",
		"Total: 2 model calls · 2400 input + 100 output tokens · $0.00161\n",
	}
	if r.code != 0 || r.stdout != "42.\n" || r.stderr != strings.Join(want, "") {
		t.Fatalf("%s", r)
	}

	chat := runlettest.NewOpenAIChatServer()
	defer chat.Close()
	chat.Enqueue(runlettest.OpenAIChatReply{Text: "Hi.", Usage: &runlettest.OpenAIChatUsage{PromptTokens: 1000, CachedTokens: 600, CompletionTokens: 20}})
	r = runCLI(t, "", nil, "run", "--base-url", chat.BaseURL(), "--model", "local-model", "--usage", "hi")
	if r.code != 0 || !strings.Contains(r.stderr, "local-model  1 call  1000 input (600 cached)  20 output  cost unknown (no price)\n") ||
		!strings.Contains(r.stderr, "1 model call · 1000 input + 20 output tokens (600 cached) · ") || strings.Contains(r.stderr, "$") ||
		!strings.Contains(r.stderr, "Total: 1 model call · 1000 input + 20 output tokens · cost unknown") {
		t.Fatalf("unpriced: %s", r)
	}

	// The config's prices: 400 plain at $2, 600 cached at $0.5, 20 out at $8.
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	yaml := "model: {provider: openai, name: local-model, base_url: " + chat.BaseURL() + "}\n" +
		"prices:\n  local-model: {input: 2, cached_input: 0.5, output: 8}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	chat.Enqueue(runlettest.OpenAIChatReply{Text: "Hi.", Usage: &runlettest.OpenAIChatUsage{PromptTokens: 1000, CachedTokens: 600, CompletionTokens: 20}})
	r = runCLI(t, "", []string{"OPENAI_API_KEY=k"}, "run", "--config", cfg, "--usage", "hi")
	if r.code != 0 || !strings.Contains(r.stderr, "local-model  1 call  1000 input (600 cached)  20 output  $0.00126\n") ||
		!strings.Contains(r.stderr, "1 model call · 1000 input + 20 output tokens (600 cached) · $0.00126 · ") {
		t.Fatalf("priced by the config: %s", r)
	}
}

// With more than one agent (a handoff, an agent called as a tool), --usage
// also splits the run by agent, each with its own cost.
func TestUsageByAgent(t *testing.T) {
	var stderr strings.Builder
	a := newApp(strings.NewReader(""), io.Discard, &stderr, func(string) string { return "" })
	u := runlet.Usage{InputTokens: 1000, OutputTokens: 100, Requests: 1}
	two := runlet.Usage{InputTokens: 2000, OutputTokens: 200, Requests: 2}
	a.printUsage(&runlet.Result{
		Usage:        two.Add(u),
		Cost:         runlet.Cost{Amount: 0.0022, Unpriced: 1},
		UsageByModel: map[string]runlet.Usage{"big": two, "local": u},
		CostByModel:  map[string]runlet.Cost{"big": {Amount: 0.0022}, "local": {Unpriced: 1}},
		UsageByAgent: map[string]runlet.Usage{"triage": u, "billing": u, "clerk": u},
		CostByAgent:  map[string]runlet.Cost{"triage": {Amount: 0.0011}, "billing": {Amount: 0.0011}, "clerk": {Unpriced: 1}},
	})
	want := "Usage by model:\n" +
		"  big    2 calls  2000 input  200 output  $0.0022\n" +
		"  local  1 call   1000 input  100 output  cost unknown (no price)\n" +
		"Usage by agent:\n" +
		"  billing  1 call  1000 input  100 output  $0.0011\n" +
		"  clerk    1 call  1000 input  100 output  cost unknown (no price)\n" +
		"  triage   1 call  1000 input  100 output  $0.0011\n" +
		"Total: 3 model calls · 3000 input + 300 output tokens · at least $0.0022 (incomplete: 1 call unpriced)\n"
	if got := stderr.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
