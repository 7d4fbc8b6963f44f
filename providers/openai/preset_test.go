package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
)

// seen is what a fake server saw of one request.
type seen struct {
	path, query  string
	auth, apiKey string
	model        string
}

// presetServer answers Chat Completions and Responses requests, recording
// each request's URL and credentials.
func presetServer(t *testing.T) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{path: r.URL.Path, query: r.URL.RawQuery, auth: r.Header.Get("Authorization"), apiKey: r.Header.Get("Api-Key"), model: string(body)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/responses") {
			io.WriteString(w, `{"id":"r1","object":"response","status":"completed","output":[{"type":"message","id":"m1","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`)
			return
		}
		io.WriteString(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

func generate(t *testing.T, m runlet.Model) error {
	t.Helper()
	_, err := m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
	return err
}

// Azure OpenAI: the key in the api-key header (no bearer token), the model
// the deployment's name; the v1 API from its root or from the resource's
// endpoint alone, and the older deployment URLs, whose api-version query
// every request keeps (it was mangled: ".../d?api-version=x/chat/completions").
func TestAzurePreset(t *testing.T) {
	srv, requests := presetServer(t)
	t.Setenv("AZURE_OPENAI_API_KEY", "az-key")
	t.Setenv("AZURE_OPENAI_ENDPOINT", "")
	t.Setenv("OPENAI_BASE_URL", "")
	tests := []struct {
		name, base string
		env        string // AZURE_OPENAI_ENDPOINT
		responses  bool
		path       string
		query      string
	}{
		{"v1 root", srv.URL + "/openai/v1/", "", false, "/openai/v1/chat/completions", ""},
		{"v1 root, responses", srv.URL + "/openai/v1", "", true, "/openai/v1/responses", ""},
		{"resource endpoint", srv.URL, "", false, "/openai/v1/chat/completions", ""},
		{"endpoint from the environment", "", srv.URL + "/", true, "/openai/v1/responses", ""},
		{"deployment URL", srv.URL + "/openai/deployments/gpt4o?api-version=2024-10-21", "", false,
			"/openai/deployments/gpt4o/chat/completions", "api-version=2024-10-21"},
		{"deployment URL, trailing slash", srv.URL + "/openai/deployments/gpt4o/?api-version=2024-10-21", "", false,
			"/openai/deployments/gpt4o/chat/completions", "api-version=2024-10-21"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AZURE_OPENAI_ENDPOINT", tt.env)
			cfg := Azure.Config("my-deployment")
			if tt.base != "" {
				cfg.BaseURL = tt.base
			}
			var m runlet.Model = NewChatCompletions(cfg)
			if tt.responses {
				m = NewResponses(cfg)
			}
			before := len(requests())
			if err := generate(t, m); err != nil {
				t.Fatal(err)
			}
			all := requests()
			if len(all) != before+1 {
				t.Fatalf("%d requests", len(all)-before)
			}
			r := all[before]
			if r.path != tt.path || r.query != tt.query || r.apiKey != "az-key" || r.auth != "" || !strings.Contains(r.model, `"model":"my-deployment"`) {
				t.Errorf("got %+v", r)
			}
		})
	}

	// No base URL: every call fails, saying how to set one, and nothing is
	// sent (not to OPENAI_BASE_URL, not to OpenAI).
	t.Setenv("AZURE_OPENAI_ENDPOINT", "")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	before := len(requests())
	for _, m := range []runlet.Model{NewChatCompletions(Azure.Config("d")), NewResponses(Azure.Config("d"))} {
		err := generate(t, m)
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || !errors.Is(err, runlet.ErrInvalidRequest) || !strings.Contains(err.Error(), "AZURE_OPENAI_ENDPOINT") {
			t.Errorf("err = %v", err)
		}
	}
	if n := len(requests()) - before; n != 0 {
		t.Errorf("%d requests sent without a base URL", n)
	}
}

// Any base URL's query survives, for Chat and Responses, and the
// Authorization header stays the default elsewhere.
func TestBaseURLQueryKept(t *testing.T) {
	srv, requests := presetServer(t)
	cfg := Config{BaseURL: srv.URL + "/v1?tenant=a&x=1", APIKey: "k", Model: "m"}
	for _, m := range []runlet.Model{NewChatCompletions(cfg), NewResponses(cfg)} {
		if err := generate(t, m); err != nil {
			t.Fatal(err)
		}
	}
	got := requests()
	if len(got) != 2 || got[0].path != "/v1/chat/completions" || got[1].path != "/v1/responses" ||
		got[0].query != "tenant=a&x=1" || got[1].query != "tenant=a&x=1" || got[0].auth != "Bearer k" || got[0].apiKey != "" {
		t.Errorf("requests %+v", got)
	}
}

// Gemini's OpenAI-compatible endpoint: its documented root and the key
// from GEMINI_API_KEY as a bearer token.
func TestGeminiOpenAIPreset(t *testing.T) {
	if p := Presets["gemini-openai"]; p.BaseURL != "https://generativelanguage.googleapis.com/v1beta/openai" || p.APIKeyEnv != "GEMINI_API_KEY" || p.APIKeyHeader != "" {
		t.Fatalf("preset %+v", p)
	}
	srv, requests := presetServer(t)
	t.Setenv("GEMINI_API_KEY", "gem-key")
	cfg := GeminiOpenAI.Config("gemini-2.5-flash")
	cfg.BaseURL = srv.URL + "/v1beta/openai/"
	if err := generate(t, NewChatCompletions(cfg)); err != nil {
		t.Fatal(err)
	}
	if got := requests(); len(got) != 1 || got[0].path != "/v1beta/openai/chat/completions" || got[0].auth != "Bearer gem-key" {
		t.Errorf("requests %+v", got)
	}
}
