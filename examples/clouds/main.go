// Command clouds runs an agent with a tool on Vertex AI (Gemini, or
// Claude for a claude-* model) or Azure OpenAI, with the cloud's own
// credentials, its answer streamed as it arrives.
//
//	go run . vertex                     # offline: a fake Vertex AI on loopback
//	go run . azure                      # offline: a fake Azure OpenAI on loopback
//	GOOGLE_CLOUD_PROJECT=my-proj go run . vertex "Weather in Lisbon?"   # live, with ADC
//	RUNLET_MODEL=claude-sonnet-4-5@20250929 GOOGLE_CLOUD_LOCATION=us-east5 GOOGLE_CLOUD_PROJECT=my-proj go run . vertex
//	AZURE_OPENAI_ENDPOINT=https://my-resource.openai.azure.com RUNLET_MODEL=my-deployment go run . azure
//
// Vertex AI goes live when $GOOGLE_CLOUD_PROJECT is set: tokens come
// from Application Default Credentials (gcloud auth application-default
// login, $GOOGLE_APPLICATION_CREDENTIALS, or the metadata server). Azure
// goes live when $AZURE_OPENAI_ENDPOINT is set: with
// $AZURE_OPENAI_API_KEY, the key; else Entra ID from
// DefaultAzureCredential (az login, a managed identity, ...), on the
// older deployment URL when $AZURE_OPENAI_API_VERSION is set.
//
// Offline, the fakes check what the services check: vertextest the
// Vertex URL of the project's model, the bearer token and, for Claude,
// anthropic_version in the body; the Azure fake the deployment URL with
// its api-version and the Entra token. The example is a module of its
// own, beside the cloud module, so the main module never carries a
// cloud SDK.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/azure"
	"github.com/runlet/runlet/cloud/vertex"
	"github.com/runlet/runlet/cloud/vertex/vertextest"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
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
	if len(os.Args) < 2 || (os.Args[1] != "vertex" && os.Args[1] != "azure") {
		fmt.Fprintln(os.Stderr, "usage: clouds vertex|azure [question]")
		os.Exit(2)
	}
	question := strings.Join(os.Args[2:], " ")
	if err := run(context.Background(), os.Args[1], question, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "clouds:", err)
		os.Exit(1)
	}
}

// script is the fakes' exchange: a tool call, then the answer.
var script = []runlettest.WireReply{
	{ToolCalls: []runlettest.WireToolCall{{Name: "get_weather", Arguments: `{"city":"Lisbon"}`}}},
	{Text: "It's 21°C and sunny in Lisbon."},
}

func run(ctx context.Context, cloud, question string, getenv func(string) string, stdout, stderr io.Writer) error {
	question = cmp.Or(question, "What's the weather in Lisbon?")
	var model runlet.Model
	var closeFake func() // stops the offline fake, if one is used
	var err error
	if cloud == "vertex" {
		model, closeFake, err = vertexModel(ctx, getenv, stderr)
	} else {
		model, closeFake, err = azureModel(getenv, stderr)
	}
	if err != nil {
		return err
	}
	if closeFake != nil {
		defer closeFake()
	}
	agent := &runlet.Agent{
		Name:         cloud,
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
		}
	}
	return nil
}

// vertexModel is Gemini, or Claude for a claude-* $RUNLET_MODEL, on Vertex
// AI: live with Application Default Credentials when
// $GOOGLE_CLOUD_PROJECT is set, else on vertextest's fake, which the
// returned func stops.
func vertexModel(ctx context.Context, getenv func(string) string, stderr io.Writer) (runlet.Model, func(), error) {
	name := cmp.Or(getenv("RUNLET_MODEL"), "gemini-2.5-flash")
	if getenv("GOOGLE_CLOUD_PROJECT") != "" {
		if vertex.IsClaude(name) {
			m, err := vertex.Anthropic(ctx, anthropic.Config{Model: name})
			return m, nil, err
		}
		m, err := vertex.Gemini(ctx, gemini.Config{Model: name})
		return m, nil, err
	}
	srv := vertextest.NewServer("example-project", "global")
	fmt.Fprintf(stderr, "No GOOGLE_CLOUD_PROJECT: using a fake Vertex AI at %s (it checks the URL, the token and the body).\n\n", srv.URL)
	var m runlet.Model
	if vertex.IsClaude(name) {
		srv.Claude.EnqueueReplies(script...)
		m = anthropic.NewMessages(anthropic.Config{Model: name, BaseURL: srv.URL, Token: srv.TokenFunc(),
			Vertex: &anthropic.Vertex{Project: "example-project", Location: "global"}})
	} else {
		srv.Gemini.EnqueueReplies(script...)
		m = gemini.New(gemini.Config{Model: name, BaseURL: srv.URL, Token: srv.TokenFunc(),
			Vertex: &gemini.Vertex{Project: "example-project", Location: "global"}})
	}
	return m, srv.Close, nil
}

// fakeEntraToken is the token the offline Azure fake requires.
const fakeEntraToken = "entra-example-token"

// azureModel is Azure OpenAI's Chat Completions: live when
// $AZURE_OPENAI_ENDPOINT is set (the key, else Entra ID), else on a fake
// at a deployment's URL with an Entra token, which the returned func stops.
func azureModel(getenv func(string) string, stderr io.Writer) (runlet.Model, func(), error) {
	deployment := cmp.Or(getenv("RUNLET_MODEL"), "gpt-4o-mini")
	cfg := openai.Azure.Config(deployment)
	if endpoint := getenv("AZURE_OPENAI_ENDPOINT"); endpoint != "" {
		cfg.BaseURL = openai.AzureBaseURL(endpoint, deployment, getenv("AZURE_OPENAI_API_VERSION"))
		cfg.APIKey = getenv("AZURE_OPENAI_API_KEY")
		m, err := azure.NewChatCompletions(cfg)
		return m, nil, err
	}
	srv := runlettest.NewOpenAIChatServer()
	srv.RequireAPIKey(fakeEntraToken) // as a bearer token, which Entra's are
	srv.EnqueueReplies(script...)
	fmt.Fprintf(stderr, "No AZURE_OPENAI_ENDPOINT: using a fake Azure OpenAI at %s (it checks the Entra token).\n\n", srv.URL)
	cfg.BaseURL = openai.AzureBaseURL(srv.URL, deployment, "2024-10-21")
	cfg.Token = func(context.Context) (string, error) { return fakeEntraToken, nil }
	return openai.NewChatCompletions(cfg), srv.Close, nil
}
