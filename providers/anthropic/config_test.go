package anthropic

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func TestConfigFromEnvironment(t *testing.T) {
	srv := runlettest.NewAnthropicServer(hello)
	defer srv.Close()
	t.Setenv("ANTHROPIC_API_KEY", testKey)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL+"/")
	m := NewMessages(Config{Model: "claude-env"})
	if _, err := m.Generate(ctxTimeout(t), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Method != "POST" || r.Path != "/v1/messages" {
		t.Errorf("%s %s", r.Method, r.Path)
	}
	for k, want := range map[string]string{
		"X-Api-Key":         testKey,
		"Anthropic-Version": "2023-06-01",
		"Content-Type":      "application/json",
		"Anthropic-Beta":    "",
		"Authorization":     "",
	} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := r.JSON()["model"]; got != "claude-env" {
		t.Errorf("model = %v", got)
	}
	if m.Name() != "anthropic" {
		t.Errorf("name = %q", m.Name())
	}
}

func TestConfigDefaults(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	r := Config{}.resolve()
	if r.url != "https://api.anthropic.com/v1/messages" || r.name != "anthropic" || r.version != DefaultVersion || r.retries != 2 || r.maxTokens != 0 {
		t.Errorf("resolved %+v", r)
	}
	if r.client.Header.Get("X-Api-Key") != "" {
		t.Error("x-api-key sent without a key")
	}
	if r.client.MaxRetries != 2 || r.client.HTTP != nil {
		t.Errorf("client %+v", r.client)
	}
	for base, want := range map[string]string{
		"http://h":              "http://h/v1/messages",
		"http://h/":             "http://h/v1/messages",
		"http://h/v1":           "http://h/v1/messages",
		"http://h/v1/":          "http://h/v1/messages",
		"http://h/proxy/claude": "http://h/proxy/claude/v1/messages",
	} {
		if got := (Config{BaseURL: base}).resolve().url; got != want {
			t.Errorf("BaseURL %q: url %q, want %q", base, got, want)
		}
	}
	for in, want := range map[int]int{0: 2, -1: 0, -5: 0, 1: 1, 7: 7} {
		if got := (Config{MaxRetries: in}).resolve().retries; got != want {
			t.Errorf("MaxRetries %d: %d", in, got)
		}
	}
}

func TestConfigHeaders(t *testing.T) {
	srv, m := newServerModel(t, Config{
		Version: "2099-01-01",
		Betas:   []string{"interleaved-thinking-2025-05-14", " ", "files-api-2025-04-14"},
		Headers: http.Header{
			"anthropic-beta": {"context-1m-2025-08-07,interleaved-thinking-2025-05-14"},
			"X-Custom":       {"v"},
		},
		Name:       "claude-proxy",
		HTTPClient: &http.Client{},
	}, hello, hello)
	if _, err := m.Generate(ctxTimeout(t), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if got := h.Get("Anthropic-Version"); got != "2099-01-01" {
		t.Errorf("version %q", got)
	}
	if got := h.Values("Anthropic-Beta"); len(got) != 1 || got[0] != "context-1m-2025-08-07,interleaved-thinking-2025-05-14,files-api-2025-04-14" {
		t.Errorf("betas %q", got)
	}
	if h.Get("X-Custom") != "v" || h.Get("X-Api-Key") != testKey {
		t.Errorf("headers %v", h)
	}

	// Per-request betas add to the configured ones, for that request only.
	req := userRequest("x")
	req.Options = map[string]any{"betas": "extra-beta,files-api-2025-04-14"}
	if _, err := m.Generate(ctxTimeout(t), req); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Header.Get("Anthropic-Beta"); got != "context-1m-2025-08-07,interleaved-thinking-2025-05-14,files-api-2025-04-14,extra-beta" {
		t.Errorf("request betas %q", got)
	}
	if got := m.cfg.client.Header.Get("Anthropic-Beta"); strings.Contains(got, "extra") {
		t.Errorf("request betas leaked into the config: %q", got)
	}

	// Errors are labelled with the configured name.
	srv.InjectFault(runlettest.Fault{Status: 400})
	_, err := m.Generate(ctxTimeout(t), userRequest("x"))
	if perr := requireProviderError(t, err); perr.Provider != "claude-proxy" || !strings.HasPrefix(err.Error(), "claude-proxy: HTTP 400") {
		t.Errorf("err = %v", err)
	}
}

func TestModelInterface(t *testing.T) {
	var _ runlet.Model = NewMessages(Config{})
}

// A base URL's query (a gateway's api-version, say) stays after the path
// (httpc.JoinURL), with or without /v1 in the base.
func TestBaseURLQueryKept(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer srv.Close()
	for _, base := range []string{srv.URL + "/gw?api-version=1", srv.URL + "/gw/v1/?api-version=1"} {
		m := NewMessages(Config{BaseURL: base, APIKey: testKey, Model: "m"})
		if _, err := m.Generate(ctxTimeout(t), userRequest("x")); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0] != "/gw/v1/messages?api-version=1" || got[1] != "/gw/v1/messages?api-version=1" {
		t.Errorf("requests %q", got)
	}
}
