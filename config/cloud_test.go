package config_test

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
	"github.com/runlet/runlet/config"
)

// cloudServer answers as Gemini, Claude or OpenAI would, by path, and
// records "path?query auth api-key" of each request.
func cloudServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Api-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(r.URL.Path, "/publishers/anthropic/"):
			io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
		case strings.Contains(r.URL.Path, "/publishers/google/"):
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
		case strings.HasSuffix(r.URL.Path, "/responses"):
			io.WriteString(w, `{"id":"r","object":"response","status":"completed","model":"gpt","output":[{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`)
		default:
			io.WriteString(w, `{"id":"c","object":"chat.completion","model":"gpt","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func buildAndCall(t *testing.T, l *config.Loader, yaml string) error {
	t.Helper()
	f, err := l.Decode("c.yaml", []byte(yaml))
	if err != nil {
		return err
	}
	s, err := l.Build(f)
	if err != nil {
		return err
	}
	_, err = s.Agent.Model.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
	return err
}

func googleToken(project string) func() (func(context.Context) (string, error), string, error) {
	return func() (func(context.Context) (string, error), string, error) {
		return func(context.Context) (string, error) { return "ya29.adc", nil }, project, nil
	}
}

// TestCloudProviders: provider vertex reaches Gemini or, for a claude-*
// name, Claude at the Vertex AI URL of the section's project and
// location (else the environment's, else the credentials' project and
// global); azure and azure-responses reach the versioned URLs with
// deployment and api_version, with a key or an Entra ID token.
func TestCloudProviders(t *testing.T) {
	srv, requests := cloudServer(t)
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "")
	t.Setenv("AZURE_OPENAI_API_KEY", "")
	t.Setenv("AZURE_OPENAI_ENDPOINT", "")
	l := &config.Loader{Providers: config.ProviderOpeners{
		GoogleToken: googleToken("adc-proj"),
		EntraToken: func() (func(context.Context) (string, error), error) {
			return func(context.Context) (string, error) { return "entra", nil }, nil
		},
	}}
	base := "base_url: '" + srv.URL + "'"
	for _, c := range []struct{ yaml, want string }{
		{"model: {provider: vertex, name: gemini-2.5-flash, project: p1, location: us-central1, " + base + "}",
			"/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent? Bearer ya29.adc "},
		{"model: {provider: vertex, name: claude-sonnet-4-5@20250929, " + base + "}",
			"/v1/projects/adc-proj/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict? Bearer ya29.adc "},
		{"model: {provider: azure, deployment: gpt4o, api_version: 2024-10-21, api_key: k-az, " + base + "}",
			"/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21  k-az"},
		{"model: {provider: azure-responses, name: gpt4o, api_version: 2025-04-01-preview, " + base + "}",
			"/openai/responses?api-version=2025-04-01-preview Bearer entra "},
		{"model: {provider: azure, name: gpt4o, " + base + "}",
			"/openai/v1/chat/completions? Bearer entra "},
	} {
		before := len(requests())
		if err := buildAndCall(t, l, c.yaml); err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if got := requests(); len(got) != before+1 || got[before] != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.yaml, got[before:], c.want)
		}
	}
	t.Setenv("GOOGLE_CLOUD_PROJECT", "env-proj")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
	before := len(requests())
	if err := buildAndCall(t, l, "model: {provider: vertex, name: gemini-2.5-pro, "+base+"}"); err != nil {
		t.Fatal(err)
	}
	if got := requests()[before]; !strings.HasPrefix(got, "/v1/projects/env-proj/locations/europe-west4/") {
		t.Errorf("from the environment: %s", got)
	}
}

// TestCloudErrors: a cloud the program cannot reach, a cloud key under
// another provider, and missing credentials each say what to do, and
// which credential source was tried; nothing is sent.
func TestCloudErrors(t *testing.T) {
	srv, requests := cloudServer(t)
	t.Setenv("AZURE_OPENAI_API_KEY", "")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	base := "base_url: '" + srv.URL + "'"
	noCloud := &config.Loader{}
	adcFails := &config.Loader{Providers: config.ProviderOpeners{GoogleToken: func() (func(context.Context) (string, error), string, error) {
		return nil, "", errors.New("vertex: Application Default Credentials from $GOOGLE_APPLICATION_CREDENTIALS (/x.json): no such file")
	}}}
	noProject := &config.Loader{Providers: config.ProviderOpeners{GoogleToken: googleToken("")}}
	for _, c := range []struct {
		l    *config.Loader
		yaml string
		want []string
	}{
		{noCloud, "model: {provider: vertex, name: gemini-2.5-flash}", []string{"model.provider", "cannot reach Vertex AI", "cloud/cmd/runlet", "Loader.Providers"}},
		{noCloud, "model: {provider: bedrock, name: amazon.nova-pro-v1:0, region: us-east-1}", []string{"cannot reach Amazon Bedrock", "cloud/cmd/runlet"}},
		{noCloud, "model: {provider: openai, name: m, region: us-east-1, project: p}", []string{"model.region: only for provider bedrock", "model.project: only for provider vertex"}},
		{noCloud, "model: {provider: azure, name: gpt4o, " + base + "}", []string{"no credentials", "$AZURE_OPENAI_API_KEY is unset", "Entra ID", "cloud/cmd/runlet"}},
		{noCloud, "model: {provider: azure, name: gpt4o, api_version: 2024-10-21, api_key: k}", []string{"no endpoint", "AZURE_OPENAI_ENDPOINT"}},
		{adcFails, "model: {provider: vertex, name: gemini-2.5-flash, project: p}", []string{"$GOOGLE_APPLICATION_CREDENTIALS (/x.json)"}},
		{noProject, "model: {provider: vertex, name: gemini-2.5-flash, " + base + "}", []string{"no project", "model.project", "GOOGLE_CLOUD_PROJECT"}},
	} {
		err := buildAndCall(t, c.l, c.yaml)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err = %v, want %q", c.yaml, err, w)
			}
		}
	}
	if n := len(requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
