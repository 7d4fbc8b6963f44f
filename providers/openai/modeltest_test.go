package openai_test

import (
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
