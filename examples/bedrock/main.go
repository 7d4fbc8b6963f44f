// Command bedrock runs an agent with a tool on Amazon Bedrock's Converse
// API, its answer streamed as it arrives.
//
//	go run .                                    # offline: a fake Bedrock on loopback
//	AWS_PROFILE=dev go run . "Weather in Lisbon?"   # Bedrock, with your AWS credentials
//	RUNLET_MODEL=us.anthropic.claude-sonnet-4-5-20250929-v1:0 AWS_REGION=us-west-2 go run .
//
// Without AWS credentials in the environment (AWS_ACCESS_KEY_ID,
// AWS_PROFILE, AWS_BEARER_TOKEN_BEDROCK, a web identity or container
// role), it starts bedrocktest's fake Bedrock, which checks every
// request's SigV4 signature as Bedrock does, and answers with a scripted
// tool call and answer; set RUNLET_BEDROCK=live to use the SDK's
// credential chain anyway (an instance role, SSO from the default
// profile). It lives in a module of its own, beside the cloud module, so
// the main module never carries the AWS SDK.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

// WeatherArgs are the tool's arguments.
type WeatherArgs struct {
	City string `json:"city" jsonschema:"the city, such as Lisbon"`
}

func getWeather(ctx context.Context, in WeatherArgs) (string, error) {
	return fmt.Sprintf("%s: 21°C, sunny", in.City), nil
}

func main() {
	question := strings.Join(os.Args[1:], " ")
	if err := run(context.Background(), question, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bedrock:", err)
		os.Exit(1)
	}
}

// live reports whether the environment names AWS credentials.
func live(getenv func(string) string) bool {
	for _, k := range []string{"RUNLET_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		if getenv(k) != "" {
			return true
		}
	}
	return false
}

func run(ctx context.Context, question string, getenv func(string) string, stdout, stderr io.Writer) error {
	question = cmp.Or(question, "What's the weather in Lisbon?")
	cfg := bedrock.Config{Model: cmp.Or(getenv("RUNLET_MODEL"), "us.amazon.nova-micro-v1:0")}
	if !live(getenv) {
		srv := bedrocktest.NewServer(
			runlettest.WireReply{ToolCalls: []runlettest.WireToolCall{{Name: "get_weather", Arguments: `{"city":"Lisbon"}`}}},
			runlettest.WireReply{Text: "It's 21°C and sunny in Lisbon."},
		)
		defer srv.Close()
		fmt.Fprintf(stderr, "No AWS credentials in the environment: using a fake Bedrock at %s (it verifies SigV4 signatures).\n\n", srv.URL)
		cfg.BaseURL, cfg.Region, cfg.Credentials = srv.URL, bedrocktest.Region, srv.Credentials()
	}
	model, err := bedrock.New(ctx, cfg)
	if err != nil {
		return err
	}
	agent := &runlet.Agent{
		Name:         "bedrock",
		Instructions: "Answer in one sentence. Use the tool for the weather.",
		Model:        model,
		Tools:        []runlet.Tool{runlet.NewTool("get_weather", "Current weather in a city", getWeather)},
	}
	for ev, err := range runlet.NewRuntime().Stream(ctx, agent, question) {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case *runlet.TextDelta:
			fmt.Fprint(stdout, ev.Delta)
		case *runlet.ToolFinished:
			fmt.Fprintf(stderr, "%s(%s) = %s\n", ev.Call.Name, ev.Call.Arguments, ev.Result.Content)
		case *runlet.RunFinished:
			fmt.Fprintln(stdout)
			fmt.Fprintf(stderr, "\n%d turns, %d input and %d output tokens\n", ev.Result.Turns, ev.Result.Usage.InputTokens, ev.Result.Usage.OutputTokens)
		}
	}
	return nil
}
