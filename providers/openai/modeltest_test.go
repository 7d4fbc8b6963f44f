package openai_test

import (
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit/modeltest"
	"github.com/runlet/runlet/providers/openai"
)

// TestModelContract runs the Model conformance suite on both adapters and
// on the OpenAI-compatible presets that send the key as a bearer token.
func TestModelContract(t *testing.T) {
	config := func(cfg openai.Config, s modeltest.Server) openai.Config {
		cfg.BaseURL, cfg.APIKey, cfg.HTTPClient = s.BaseURL, s.APIKey, s.HTTPClient
		cfg.MaxResponseBytes, cfg.MaxRetries = s.MaxResponseBytes, -1
		return cfg
	}
	t.Run("chat", func(t *testing.T) {
		modeltest.Run(t, modeltest.OpenAIChatWire, func(t *testing.T, s modeltest.Server) runlet.Model {
			return openai.NewChatCompletions(config(openai.Config{Model: "gpt-test"}, s))
		})
	})
	t.Run("responses", func(t *testing.T) {
		modeltest.Run(t, modeltest.OpenAIResponsesWire, func(t *testing.T, s modeltest.Server) runlet.Model {
			return openai.NewResponses(config(openai.Config{Model: "gpt-test"}, s))
		})
	})
	for _, p := range []openai.Preset{openai.DeepSeek, openai.OpenRouter, openai.GeminiOpenAI} {
		t.Run(p.Name, func(t *testing.T) {
			modeltest.Run(t, modeltest.OpenAIChatWire, func(t *testing.T, s modeltest.Server) runlet.Model {
				return openai.NewChatCompletions(config(p.Config("test-model"), s))
			})
		})
	}
}

// TestAzureEntraModelContract runs the suite against Azure OpenAI's
// versioned URLs (a deployment's for Chat, /openai/responses for
// Responses, each with its api-version) with an Entra ID token
// (Config.Token) in place of the key.
func TestAzureEntraModelContract(t *testing.T) {
	config := func(deployment string, s modeltest.Server) openai.Config {
		cfg := openai.Azure.Config("gpt-test")
		key := s.APIKey
		cfg.BaseURL = openai.AzureBaseURL(s.BaseURL, deployment, "2024-10-21")
		cfg.Token = func(context.Context) (string, error) { return key, nil }
		cfg.HTTPClient, cfg.MaxResponseBytes, cfg.MaxRetries = s.HTTPClient, s.MaxResponseBytes, -1
		return cfg
	}
	t.Run("chat", func(t *testing.T) {
		modeltest.Run(t, modeltest.OpenAIChatWire, func(t *testing.T, s modeltest.Server) runlet.Model {
			return openai.NewChatCompletions(config("gpt-test", s))
		})
	})
	t.Run("responses", func(t *testing.T) {
		modeltest.Run(t, modeltest.OpenAIResponsesWire, func(t *testing.T, s modeltest.Server) runlet.Model {
			return openai.NewResponses(config("", s))
		})
	})
}
