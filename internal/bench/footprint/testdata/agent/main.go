// Command agent is the minimal Runlet agent of the footprint comparison
// (see ../../measure.sh): one tool, the Chat Completions adapter, one run
// against OPENAI_BASE_URL. With FOOTPRINT_EXIT set it exits once ready to
// send, which is what the start-up time measures.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
)

type weatherArgs struct {
	City string `json:"city"`
}

func main() {
	weather := runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in weatherArgs) (string, error) {
		return "sunny in " + in.City, nil
	})
	agent := &runlet.Agent{
		Instructions: "Be brief.",
		Model:        openai.NewChatCompletions(openai.Config{BaseURL: os.Getenv("OPENAI_BASE_URL"), APIKey: os.Getenv("OPENAI_API_KEY"), Model: "gpt-4o-mini"}),
		Tools:        []runlet.Tool{weather},
	}
	rt := runlet.NewRuntime()
	if os.Getenv("FOOTPRINT_EXIT") != "" {
		return
	}
	res, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(res.Output)
}
