package config_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/runlettest"
)

// A config in YAML becomes an agent and a runtime. Here the model is a
// fake OpenAI-compatible server on loopback; in real use, base_url is the
// provider's API and the key comes from the environment.
func ExampleLoader_Build() {
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "calculator", Arguments: `{"expression":"6*7"}`}}},
		runlettest.OpenAIChatReply{Text: "6 × 7 = 42."},
	)
	defer srv.Close()

	yaml := []byte(`
name: assistant
instructions: Use the calculator for arithmetic.
model:
  provider: openai
  name: ${RUNLET_MODEL:-gpt-4o-mini}
  base_url: ` + srv.BaseURL() + `
  api_key: ${EXAMPLE_KEY}
tools:
  - name: calculator
max_turns: 4
`)
	env := map[string]string{"EXAMPLE_KEY": "sk-example"}
	loader := &config.Loader{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		// The model's name may come from RUNLET_MODEL; the key, a
		// credential, may come from any variable.
		AllowEnv: []string{"RUNLET_MODEL"},
	}
	file, err := loader.Decode("agent.yaml", yaml)
	if err != nil {
		fmt.Println(err)
		return
	}
	setup, err := loader.Build(file)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := setup.NewRuntime().Run(context.Background(), setup.Agent, "What is 6*7?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(setup.Agent.Name, "answered:", res.Output)
	// Output: assistant answered: 6 × 7 = 42.
}

// Mistakes in a config are reported all at once, each with its line and,
// when it can, the fix.
func ExampleLoader_Decode_errors() {
	yaml := []byte(`
model:
  provider: antropic
  name: claude-sonnet-4-5
max_turn: 3
`)
	_, err := (&config.Loader{}).Decode("agent.yaml", yaml)
	var ce *config.Error
	if errors.As(err, &ce) {
		msg, _, _ := strings.Cut(ce.Msg, " (known") // then the list of known fields
		fmt.Printf("%s:%d:%d: %s: %s\n", ce.File, ce.Line, ce.Column, ce.Field, msg)
	}
	// Output:
	// agent.yaml:5:1: max_turn: unknown field; did you mean "max_turns"?
}
