package trusttest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
)

// conf is what every adapter's Config has in common.
type conf struct {
	BaseURL    string
	APIKey     string
	Headers    http.Header
	HTTPClient *http.Client
	Insecure   bool          // AllowInsecureHTTP
	Max        int64         // MaxResponseBytes
	Idle       time.Duration // StreamIdleTimeout
}

type adapter struct {
	name string
	new  func(conf) runlet.Model
	// config is the adapter's Config holding c, for the printing tests.
	config func(conf) any
}

func openaiConfig(c conf) openai.Config {
	return openai.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, Model: "m", HTTPClient: c.HTTPClient, Headers: c.Headers,
		MaxRetries: -1, AllowInsecureHTTP: c.Insecure, MaxResponseBytes: c.Max, StreamIdleTimeout: c.Idle, Organization: "org-1"}
}

func presetConfig(c conf) openai.Config {
	cfg := openai.DeepSeek.Config("m")
	cfg.APIKey, cfg.BaseURL, cfg.HTTPClient, cfg.Headers = c.APIKey, c.BaseURL, c.HTTPClient, c.Headers
	cfg.MaxRetries, cfg.AllowInsecureHTTP, cfg.MaxResponseBytes, cfg.StreamIdleTimeout = -1, c.Insecure, c.Max, c.Idle
	return cfg
}

// customKeyConfig sends the key in a header of the user's naming
// (Config.APIKeyHeader), as the Azure preset does in api-key.
func customKeyConfig(c conf) openai.Config {
	cfg := openaiConfig(c)
	cfg.APIKeyHeader = "X-Custom-Key"
	return cfg
}

func anthropicConfig(c conf) anthropic.Config {
	return anthropic.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, Model: "m", HTTPClient: c.HTTPClient, Headers: c.Headers,
		MaxRetries: -1, AllowInsecureHTTP: c.Insecure, MaxResponseBytes: c.Max, StreamIdleTimeout: c.Idle}
}

func geminiConfig(c conf) gemini.Config {
	return gemini.Config{APIKey: c.APIKey, BaseURL: c.BaseURL, Model: "m", HTTPClient: c.HTTPClient, Headers: c.Headers,
		MaxRetries: -1, AllowInsecureHTTP: c.Insecure, MaxResponseBytes: c.Max, StreamIdleTimeout: c.Idle}
}

// tokenConfig sends the key as a refreshed access token (Config.Token,
// as Vertex AI and Entra ID credentials do) instead of an API key.
func tokenConfig[C any](mk func(conf) C, set func(*C, func(context.Context) (string, error))) func(conf) C {
	return func(c conf) C {
		key := c.APIKey
		c.APIKey = ""
		cfg := mk(c)
		if key != "" {
			set(&cfg, func(context.Context) (string, error) { return key, nil })
		}
		return cfg
	}
}

var (
	openaiToken    = tokenConfig(openaiConfig, func(c *openai.Config, f func(context.Context) (string, error)) { c.Token = f })
	anthropicToken = tokenConfig(anthropicConfig, func(c *anthropic.Config, f func(context.Context) (string, error)) { c.Token = f })
	geminiToken    = tokenConfig(geminiConfig, func(c *gemini.Config, f func(context.Context) (string, error)) { c.Token = f })
)

// Azure OpenAI's versioned Responses URL with an Entra ID token.
func azureEntra(c conf) openai.Config {
	cfg := openaiToken(c)
	cfg.Name, cfg.APIKeyHeader = "azure", "api-key"
	if c.BaseURL != "" {
		cfg.BaseURL = openai.AzureBaseURL(c.BaseURL, "", "2025-04-01-preview")
	}
	return cfg
}

// On Vertex AI (Config.Vertex), with the key as the access token.
func anthropicVertex(c conf) anthropic.Config {
	cfg := anthropicToken(c)
	cfg.Vertex = &anthropic.Vertex{Project: "p", Location: "us-east5"}
	return cfg
}

func geminiVertex(c conf) gemini.Config {
	cfg := geminiToken(c)
	cfg.Vertex = &gemini.Vertex{Project: "p", Location: "us-central1"}
	return cfg
}

var adapters = []adapter{
	{"openai-chat", func(c conf) runlet.Model { return openai.NewChatCompletions(openaiConfig(c)) }, func(c conf) any { return openaiConfig(c) }},
	{"openai-responses", func(c conf) runlet.Model { return openai.NewResponses(openaiConfig(c)) }, func(c conf) any { return openaiConfig(c) }},
	{"openai-preset-deepseek", func(c conf) runlet.Model { return openai.NewChatCompletions(presetConfig(c)) }, func(c conf) any { return presetConfig(c) }},
	{"openai-custom-key-header", func(c conf) runlet.Model { return openai.NewChatCompletions(customKeyConfig(c)) }, func(c conf) any { return customKeyConfig(c) }},
	{"anthropic", func(c conf) runlet.Model { return anthropic.NewMessages(anthropicConfig(c)) }, func(c conf) any { return anthropicConfig(c) }},
	{"gemini", func(c conf) runlet.Model { return gemini.New(geminiConfig(c)) }, func(c conf) any { return geminiConfig(c) }},
	{"openai-chat-token", func(c conf) runlet.Model { return openai.NewChatCompletions(openaiToken(c)) }, func(c conf) any { return openaiToken(c) }},
	{"openai-responses-token", func(c conf) runlet.Model { return openai.NewResponses(openaiToken(c)) }, func(c conf) any { return openaiToken(c) }},
	{"anthropic-token", func(c conf) runlet.Model { return anthropic.NewMessages(anthropicToken(c)) }, func(c conf) any { return anthropicToken(c) }},
	{"gemini-token", func(c conf) runlet.Model { return gemini.New(geminiToken(c)) }, func(c conf) any { return geminiToken(c) }},
	{"anthropic-vertex", func(c conf) runlet.Model { return anthropic.NewMessages(anthropicVertex(c)) }, func(c conf) any { return anthropicVertex(c) }},
	{"gemini-vertex", func(c conf) runlet.Model { return gemini.New(geminiVertex(c)) }, func(c conf) any { return geminiVertex(c) }},
	{"azure-entra", func(c conf) runlet.Model { return openai.NewResponses(azureEntra(c)) }, func(c conf) any { return azureEntra(c) }},
}

// modes are the two ways a run calls a model.
var modes = []struct {
	name string
	call func(ctx context.Context, m runlet.Model) error
}{
	{"generate", func(ctx context.Context, m runlet.Model) error {
		_, err := m.Generate(ctx, request())
		return err
	}},
	{"stream", func(ctx context.Context, m runlet.Model) error {
		for _, err := range m.Stream(ctx, request()) {
			if err != nil {
				return err
			}
		}
		return nil
	}},
}

func request() *runlet.ModelRequest {
	return &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
}

// guard is a test's hang guard.
func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
