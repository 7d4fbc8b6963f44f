package trusttest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
)

// TestTokenReplacesKey: with Config.Token set, every adapter sends the
// token its source gives for each request, refreshed, as
// "Authorization: Bearer", and no API key, not even one from the
// environment (which belongs to another service).
func TestTokenReplacesKey(t *testing.T) {
	for _, env := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		t.Setenv(env, key)
	}
	type source = func(context.Context) (string, error)
	models := []struct {
		name string
		new  func(base string, tok source) runlet.Model
	}{
		{"openai-chat", func(b string, tok source) runlet.Model {
			return openai.NewChatCompletions(openai.Config{BaseURL: b, Model: "m", Token: tok, MaxRetries: -1})
		}},
		{"openai-responses", func(b string, tok source) runlet.Model {
			return openai.NewResponses(openai.Config{BaseURL: b, Model: "m", Token: tok, MaxRetries: -1})
		}},
		{"openai-azure-preset", func(b string, tok source) runlet.Model {
			cfg := openai.Azure.Config("deployment")
			cfg.BaseURL, cfg.Token, cfg.MaxRetries = b, tok, -1
			return openai.NewChatCompletions(cfg)
		}},
		{"anthropic", func(b string, tok source) runlet.Model {
			return anthropic.NewMessages(anthropic.Config{BaseURL: b, Model: "m", Token: tok, MaxRetries: -1})
		}},
		{"gemini", func(b string, tok source) runlet.Model {
			return gemini.New(gemini.Config{BaseURL: b, Model: "m", Token: tok, MaxRetries: -1})
		}},
	}
	for _, m := range models {
		for _, mode := range modes {
			t.Run(m.name+"/"+mode.name, func(t *testing.T) {
				var mu sync.Mutex
				var seen []http.Header
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					seen = append(seen, r.Header.Clone())
					mu.Unlock()
					http.Error(w, `{"error":{"message":"nope"}}`, http.StatusBadRequest)
				}))
				defer srv.Close()
				var n atomic.Int32
				model := m.new(srv.URL, func(context.Context) (string, error) {
					return fmt.Sprintf("fresh-token-%d-abcdefgh", n.Add(1)), nil
				})
				for range 2 {
					if err := mode.call(guard(t), model); err == nil || strings.Contains(err.Error(), "fresh-token") {
						t.Fatalf("err = %v", err)
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if len(seen) != 2 {
					t.Fatalf("%d requests", len(seen))
				}
				for i, h := range seen {
					if got, want := h.Get("Authorization"), fmt.Sprintf("Bearer fresh-token-%d-abcdefgh", i+1); got != want {
						t.Errorf("request %d: Authorization %q, want %q", i, got, want)
					}
					for _, k := range []string{"X-Api-Key", "X-Goog-Api-Key", "Api-Key"} {
						if h.Get(k) != "" {
							t.Errorf("request %d: sent %s with a token", i, k)
						}
					}
				}
			})
		}
	}
}
