// Command config builds its agent from a YAML file (agent.yaml beside this
// file, embedded) and adds a tool written in Go through the registry.
//
//	go run ./examples/config                                   # offline replay
//	OPENAI_API_KEY=sk-... go run ./examples/config "What is 17% of 2,340, and what day is it?"
//	go run ./examples/config -config my-agent.yaml "Hello"
//
// The same file runs without Go code in the CLI:
//
//	go run ./cmd/runlet run --config examples/config/agent.yaml "What time is it in Tokyo?"
//
// With -seeds it runs seeds.yaml instead: the agent factory of the seed
// articles (memory type, max_messages, tools with params) in Runlet's
// format, with its search tools made by a factory (serper.go):
//
//	go run ./examples/config -seeds                             # offline replay
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/internal/demo"
)

//go:embed agent.yaml
var agentYAML []byte

//go:embed seeds.yaml
var seedsYAML []byte

type CapitalArgs struct {
	Country string `json:"country" jsonschema:"the country, such as France"`
}

// getCapital is a Go tool the config may name (tools: [get_capital]).
var getCapital = runlet.NewTool("get_capital", "Returns the capital city of a country.",
	func(ctx context.Context, in CapitalArgs) (string, error) {
		capitals := map[string]string{"uk": "London", "france": "Paris", "japan": "Tokyo"}
		if c, ok := capitals[strings.ToLower(in.Country)]; ok {
			return c, nil
		}
		return "", fmt.Errorf("no capital known for %q", in.Country)
	})

func main() {
	path := flag.String("config", "", "agent config file (default: the embedded agent.yaml)")
	seeds := flag.Bool("seeds", false, "run the embedded seeds.yaml instead of agent.yaml")
	flag.Parse()
	embedded := "agent.yaml"
	if *seeds {
		embedded = "seeds.yaml"
	}
	if err := run(context.Background(), *path, embedded, strings.Join(flag.Args(), " "), os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run runs the config file at path, else the embedded file named
// embedded (agent.yaml or seeds.yaml).
func run(ctx context.Context, path, embedded, question string, stdout, stderr io.Writer) error {
	loader := &config.Loader{
		Tools:     config.Tools(getCapital),
		Factories: map[string]config.ToolFactory{"serper": serper},
		AllowEnv:  []string{"RUNLET_MODEL"},
	}
	replay := os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" && path == ""
	if replay {
		// No model configured: a recorded session answers, offline.
		loader.HTTPClient = demo.Client()
		question = demo.Question
		fmt.Fprintf(stderr, "No OPENAI_API_KEY or OPENAI_BASE_URL: replaying a recorded session (offline).\nIts question: %s\n\n", question)
	}

	var setup *config.Setup
	var err error
	if path != "" {
		setup, err = loader.Load(path)
	} else {
		var f *config.File
		data := agentYAML
		if embedded == "seeds.yaml" {
			data = seedsYAML
		}
		if f, err = loader.Decode(embedded, data); err == nil {
			if replay {
				// The recorded model calls get_capital, which the file does
				// not list; a File can be changed before Build.
				f.Tools = append(f.Tools, config.ToolRef{Name: "get_capital"})
			}
			setup, err = loader.Build(f)
		}
	}
	if err != nil {
		return err // such as: agent.yaml:12:3: model.nmae: unknown field; did you mean "name"? ...
	}
	if question == "" {
		question = "What is 17% of 2340, and what day of the week is it?"
	}

	// store: memory keeps the session in the process (a durable kind
	// needs its opener in loader.Stores).
	store, err := setup.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	var opts []runlet.RunOption
	if setup.Store != nil {
		opts = append(opts, runlet.WithSession("example"))
	}
	rt := setup.NewRuntime()
	for ev, err := range rt.Stream(ctx, setup.Agent, question, opts...) {
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
			fmt.Fprintf(stderr, "(%d model calls, %d tokens)\n", ev.Result.Turns, ev.Result.Usage.TotalTokens)
		}
	}
	return nil
}
