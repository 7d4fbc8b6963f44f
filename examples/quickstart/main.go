// Command quickstart is the smallest useful Runlet program: an agent with one
// tool, its answer streamed as it arrives.
//
//	go run ./examples/quickstart                        # offline: replays a recorded session
//	OPENAI_API_KEY=sk-... go run ./examples/quickstart "What is the capital of France?"
//	OPENAI_BASE_URL=http://localhost:11434/v1 RUNLET_MODEL=llama3.2 go run ./examples/quickstart
//
// Without OPENAI_API_KEY or OPENAI_BASE_URL it replays a recorded OpenAI
// session (internal/demo) through the real adapter and runtime, and
// asks the recorded question whatever you pass.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/providers/openai"
)

// CapitalArgs are the tool's arguments; the JSON Schema the model sees is
// inferred from them.
type CapitalArgs struct {
	Country string `json:"country" jsonschema:"the country, such as France"`
}

func getCapital(ctx context.Context, in CapitalArgs) (string, error) {
	capitals := map[string]string{"uk": "London", "united kingdom": "London", "france": "Paris", "japan": "Tokyo"}
	if c, ok := capitals[strings.ToLower(in.Country)]; ok {
		return c, nil
	}
	return "", fmt.Errorf("no capital known for %q", in.Country)
}

func main() {
	question := strings.Join(os.Args[1:], " ")
	if err := run(context.Background(), question, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, question string, getenv func(string) string, stdout, stderr io.Writer) error {
	// Connection settings: API key and base URL come from the environment.
	cfg := openai.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "gpt-4o-mini")}
	if getenv("OPENAI_API_KEY") == "" && getenv("OPENAI_BASE_URL") == "" {
		fmt.Fprintf(stderr, "No OPENAI_API_KEY or OPENAI_BASE_URL: replaying a recorded session (offline).\nIts question: %s\n\n", demo.Question)
		cfg.APIKey, cfg.HTTPClient = "unused", demo.Client()
		question = demo.Question
	}
	question = cmp.Or(question, "What is the capital of the UK?")

	agent := &runlet.Agent{
		Name:         "quickstart",
		Instructions: "Answer in one sentence. Use the tool for capitals.",
		Model:        openai.NewChatCompletions(cfg),
		Tools:        []runlet.Tool{runlet.NewTool("get_capital", "Returns the capital city of a country.", getCapital)},
	}
	for ev, err := range runlet.NewRuntime().Stream(ctx, agent, question) {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case *runlet.TextDelta:
			fmt.Fprint(stdout, ev.Delta)
		case *runlet.ToolFinished:
			fmt.Fprintf(stderr, "[tool] %s(%s) = %s\n", ev.Call.Name, ev.Call.Arguments, ev.Result.Content)
		case *runlet.RunFinished:
			fmt.Fprintln(stdout)
		}
	}
	return nil
}
