package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// --reasoning and --reasoning-budget set the provider-neutral reasoning
// setting, mapped by the adapter and shown unless --no-reasoning; an
// --option for the provider's own field wins; a level that is not one is a
// usage error before any request.
func TestReasoningFlags(t *testing.T) {
	ant := runlettest.NewAnthropicServer()
	defer ant.Close()
	ant.EnqueueReplies(runlettest.WireReply{Reasoning: "Think.", ReasoningSignature: "sig", Text: "Done."})
	r := runCLI(t, "", []string{"ANTHROPIC_API_KEY=k"}, "run", "--provider", "anthropic", "--base-url", ant.BaseURL(),
		"--model", "claude-opus-4-6", "--reasoning", "high", "--reasoning-budget", "2048", "Prove it.")
	if r.code != 0 || r.stdout != "Done.\n" || !strings.Contains(r.stderr, "Think.") {
		t.Fatalf("%s", r)
	}
	body := ant.Requests()[0].JSON()
	thinking, _ := json.Marshal(body["thinking"])
	config, _ := json.Marshal(body["output_config"])
	if string(thinking) != `{"budget_tokens":2048,"display":"summarized","type":"enabled"}` || string(config) != `{"effort":"high"}` {
		t.Errorf("thinking %s, output_config %s", thinking, config)
	}
	// A model before Claude 4.6 takes no effort: without a budget the run
	// fails before the request, saying what to add.
	r = runCLI(t, "", []string{"ANTHROPIC_API_KEY=k"}, "run", "--provider", "anthropic", "--base-url", ant.BaseURL(),
		"--model", "claude-sonnet-4-5", "--reasoning", "high", "Prove it.")
	if r.code != 1 || !strings.Contains(r.stderr, "--reasoning-budget") || len(ant.Requests()) != 1 {
		t.Fatalf("%s", r)
	}

	chat := runlettest.NewOpenAIChatServer()
	defer chat.Close()
	chat.EnqueueReplies(runlettest.WireReply{Text: "a"}, runlettest.WireReply{Text: "b"})
	r = runCLI(t, "", nil, "run", "--base-url", chat.BaseURL(), "--model", "m", "--reasoning", "medium", "--no-reasoning", "hi")
	if r.code != 0 || chat.Requests()[0].JSON()["reasoning_effort"] != "medium" {
		t.Fatalf("%s\n%s", r, chat.Requests()[0].Body)
	}
	r = runCLI(t, "", nil, "run", "--base-url", chat.BaseURL(), "--model", "m", "--reasoning", "high", "--option", "reasoning_effort=minimal", "hi")
	if r.code != 0 || chat.Requests()[1].JSON()["reasoning_effort"] != "minimal" {
		t.Fatalf("the option does not win: %s\n%s", r, chat.Requests()[1].Body)
	}

	for _, args := range [][]string{{"--reasoning", "hihg"}, {"--reasoning-budget", "-5"}} {
		r = runCLI(t, "", nil, append([]string{"run", "--base-url", chat.BaseURL(), "--model", "m"}, append(args, "hi")...)...)
		if r.code != 2 || !strings.Contains(r.stderr, args[0][1:]+": want") || !strings.Contains(r.stderr, "want ") {
			t.Errorf("%v: %s", args, r)
		}
	}
	if n := len(chat.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2: an invalid flag sent one", n)
	}
}
