package openai

import (
	"context"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

func TestAzureBaseURL(t *testing.T) {
	for _, c := range []struct{ endpoint, deployment, version, want string }{
		{"https://r.openai.azure.com", "gpt4o", "", "https://r.openai.azure.com/openai/v1"},
		{"https://r.openai.azure.com/", "", "", "https://r.openai.azure.com/openai/v1"},
		{"https://r.openai.azure.com", "gpt4o", "2024-10-21", "https://r.openai.azure.com/openai/deployments/gpt4o?api-version=2024-10-21"},
		{"https://r.openai.azure.com", "a b/c", "2024-10-21", "https://r.openai.azure.com/openai/deployments/a%20b%2Fc?api-version=2024-10-21"},
		{"https://r.openai.azure.com", "", "2025-04-01-preview", "https://r.openai.azure.com/openai?api-version=2025-04-01-preview"},
	} {
		if got := AzureBaseURL(c.endpoint, c.deployment, c.version); got != c.want {
			t.Errorf("AzureBaseURL(%q, %q, %q) = %q, want %q", c.endpoint, c.deployment, c.version, got, c.want)
		}
	}
}

// TestAzureVersionedAPIs: with AzureBaseURL, Chat Completions reaches a
// deployment's URL and Responses /openai/responses, each with its
// api-version, the key in api-key; with an Entra ID token (Config.Token)
// instead, the token goes as a bearer and no api-key is sent, not even
// $AZURE_OPENAI_API_KEY.
func TestAzureVersionedAPIs(t *testing.T) {
	srv, requests := presetServer(t)
	t.Setenv("AZURE_OPENAI_API_KEY", "az-key")
	entra := func(context.Context) (string, error) { return "entra-token", nil }
	for _, c := range []struct {
		name        string
		responses   bool
		deployment  string
		token       func(context.Context) (string, error)
		path, query string
		key, auth   string
	}{
		{"chat, key", false, "gpt4o", nil, "/openai/deployments/gpt4o/chat/completions", "api-version=2024-10-21", "az-key", ""},
		{"responses, key", true, "", nil, "/openai/responses", "api-version=2024-10-21", "az-key", ""},
		{"chat, entra", false, "gpt4o", entra, "/openai/deployments/gpt4o/chat/completions", "api-version=2024-10-21", "", "Bearer entra-token"},
		{"responses, entra", true, "", entra, "/openai/responses", "api-version=2024-10-21", "", "Bearer entra-token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Azure.Config("gpt4o")
			cfg.BaseURL, cfg.Token = AzureBaseURL(srv.URL, c.deployment, "2024-10-21"), c.token
			var m runlet.Model = NewChatCompletions(cfg)
			if c.responses {
				m = NewResponses(cfg)
			}
			before := len(requests())
			if err := generate(t, m); err != nil {
				t.Fatal(err)
			}
			r := requests()[before]
			if r.path != c.path || r.query != c.query || r.apiKey != c.key || r.auth != c.auth || !strings.Contains(r.model, `"model":"gpt4o"`) {
				t.Errorf("got %+v", r)
			}
		})
	}
}
