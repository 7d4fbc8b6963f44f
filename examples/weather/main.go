// Command weather is a streaming tool agent on any provider: it prints the
// answer as it arrives and each tool call as it happens. Two tools chain:
// get_capital, then get_weather for that city (a fixed table here; call a
// real weather API in yours).
//
//	go run ./examples/weather                                      # offline replay
//	OPENAI_API_KEY=sk-... go run ./examples/weather "What's the weather in the capital of Japan?"
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/weather
//	GEMINI_API_KEY=... go run ./examples/weather
//	go run ./examples/weather -provider openai-responses -model gpt-5-mini
//	go run ./examples/weather -base-url http://localhost:11434/v1 -model llama3.2   # Ollama
//	go run ./examples/weather -events                              # every event as JSON lines
//
// -provider picks the adapter: openai (Chat Completions), openai-responses,
// anthropic or gemini. Without it the environment decides: OPENAI_API_KEY,
// OPENAI_BASE_URL or -base-url (Chat Completions), else ANTHROPIC_API_KEY
// (Messages), else GEMINI_API_KEY or GOOGLE_API_KEY (Gemini). -model, else RUNLET_MODEL, names the model. With none of
// them it replays a recorded OpenAI session, whose question is about the
// UK's capital only.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/demo"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
)

type CapitalArgs struct {
	Country string `json:"country" jsonschema:"the country, such as Japan"`
}

type WeatherArgs struct {
	City string `json:"city" jsonschema:"the city, such as Tokyo"`
}

// Forecast is what get_weather returns; the model sees it as JSON.
type Forecast struct {
	City       string  `json:"city"`
	Conditions string  `json:"conditions"`
	TempC      float64 `json:"temp_c"`
}

func tools() []runlet.Tool {
	capitals := map[string]string{"uk": "London", "united kingdom": "London", "france": "Paris", "japan": "Tokyo", "china": "Beijing"}
	weather := map[string]Forecast{
		"london":  {"London", "light rain", 12},
		"paris":   {"Paris", "sunny", 18},
		"tokyo":   {"Tokyo", "clear", 21},
		"beijing": {"Beijing", "hazy", 16},
	}
	return []runlet.Tool{
		runlet.NewTool("get_capital", "Returns the capital city of a country.",
			func(ctx context.Context, in CapitalArgs) (string, error) {
				if c, ok := capitals[strings.ToLower(in.Country)]; ok {
					return c, nil
				}
				return "", fmt.Errorf("no capital known for %q", in.Country)
			}),
		runlet.NewTool("get_weather", "Returns the current weather in a city.",
			func(ctx context.Context, in WeatherArgs) (Forecast, error) {
				if f, ok := weather[strings.ToLower(in.City)]; ok {
					return f, nil
				}
				return Forecast{}, fmt.Errorf("no weather for %q", in.City)
			}),
	}
}

// options are the command's flags.
type options struct {
	provider, baseURL, model string
	events                   bool
}

// model picks the adapter from the flags, else the environment; replay
// reports that none was configured and a recording answers instead.
func model(o options, getenv func(string) string) (m runlet.Model, replay bool, err error) {
	name := cmp.Or(o.model, getenv("RUNLET_MODEL"))
	provider := o.provider
	if provider == "" {
		switch {
		case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "" || o.baseURL != "":
			provider = "openai"
		case getenv("ANTHROPIC_API_KEY") != "":
			provider = "anthropic"
		case getenv("GEMINI_API_KEY") != "" || getenv("GOOGLE_API_KEY") != "":
			provider = "gemini"
		default:
			return openai.NewChatCompletions(openai.Config{Model: "gpt-4o-mini", APIKey: "unused", HTTPClient: demo.Client()}), true, nil
		}
	}
	switch provider {
	case "openai":
		return openai.NewChatCompletions(openai.Config{BaseURL: o.baseURL, Model: cmp.Or(name, "gpt-4o-mini")}), false, nil
	case "openai-responses":
		return openai.NewResponses(openai.Config{BaseURL: o.baseURL, Model: cmp.Or(name, "gpt-5-mini")}), false, nil
	case "anthropic":
		return anthropic.NewMessages(anthropic.Config{BaseURL: o.baseURL, Model: cmp.Or(name, "claude-sonnet-4-5")}), false, nil
	case "gemini":
		return gemini.New(gemini.Config{BaseURL: o.baseURL, Model: cmp.Or(name, "gemini-2.5-flash")}), false, nil
	}
	return nil, false, fmt.Errorf("unknown -provider %q (want openai, openai-responses, anthropic or gemini)", provider)
}

func main() {
	var o options
	flag.StringVar(&o.provider, "provider", "", "adapter: openai, openai-responses, anthropic or gemini (default: from the environment)")
	flag.StringVar(&o.baseURL, "base-url", "", "API root, such as http://localhost:11434/v1 for Ollama")
	flag.StringVar(&o.model, "model", "", "model name (default $RUNLET_MODEL, else the provider's default)")
	flag.BoolVar(&o.events, "events", false, "print every event as a JSON line instead")
	flag.Parse()
	if err := run(context.Background(), strings.Join(flag.Args(), " "), o, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "weather:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, question string, o options, getenv func(string) string, stdout, stderr io.Writer) error {
	m, replay, err := model(o, getenv)
	if err != nil {
		return err
	}
	events := o.events
	question = cmp.Or(question, "What's the weather like in the capital of the UK?")
	if replay {
		fmt.Fprintf(stderr, "No OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY or GEMINI_API_KEY: replaying a recorded session (offline).\nIts question: %s\n\n", demo.Question)
		question = demo.Question
	}
	agent := &runlet.Agent{
		Name:         "weather",
		Instructions: "You answer weather questions. Use the tools; never guess a forecast.",
		Model:        m,
		Tools:        tools(),
		MaxTurns:     6,
	}
	var opts []runlet.RuntimeOption
	if events {
		// Observers watch every event; JSONLObserver writes them as JSON lines.
		opts = append(opts, runlet.WithObservers(runlet.NewJSONLObserver(stdout)))
	}
	rt := runlet.NewRuntime(opts...)

	for ev, err := range rt.Stream(ctx, agent, question) {
		if err != nil {
			return err
		}
		if events {
			continue
		}
		switch ev := ev.(type) {
		case *runlet.ReasoningDelta:
			fmt.Fprint(stderr, ev.Delta)
		case *runlet.TextDelta:
			fmt.Fprint(stdout, ev.Delta)
		case *runlet.ToolStarted:
			fmt.Fprintf(stderr, "→ %s %s\n", ev.Call.Name, ev.Call.Arguments)
		case *runlet.ToolFinished:
			fmt.Fprintf(stderr, "← %s (%s)\n", ev.Result.Content, ev.Duration)
		case *runlet.RunFinished:
			u := ev.Result.Usage
			fmt.Fprintf(stdout, "\n")
			fmt.Fprintf(stderr, "%d model calls, %d input + %d output tokens\n", ev.Result.Turns, u.InputTokens, u.OutputTokens)
		}
	}
	return nil
}
