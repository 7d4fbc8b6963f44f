package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeCredential grants "entra-N" tokens lasting ttl from its clock, for
// openai.AzureScope only.
type fakeCredential struct {
	mu     sync.Mutex
	n      int
	ttl    time.Duration
	now    time.Time
	scopes []string
	err    error
}

func (f *fakeCredential) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopes = append(f.scopes, opts.Scopes...)
	if f.err != nil {
		return azcore.AccessToken{}, f.err
	}
	f.n++
	return azcore.AccessToken{Token: fmt.Sprintf("entra-%d-abcdefgh", f.n), ExpiresOn: f.now.Add(f.ttl)}, nil
}

// azureServer is a fake Azure OpenAI that records each request's path,
// query and auth headers, and answers a chat completion.
func azureServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery+" auth="+r.Header.Get("Authorization")+" api-key="+r.Header.Get("Api-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestTokenRefreshedBeforeExpiry: a token is reused while it has more
// than five minutes left and replaced after; Azure sees the new one at a
// deployment's URL with its api-version, and no api-key even when
// $AZURE_OPENAI_API_KEY is set.
func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	t.Setenv("AZURE_OPENAI_API_KEY", "az-key-never-sent")
	srv, requests := azureServer(t)
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := start
	cred := &fakeCredential{ttl: time.Hour, now: start}
	c := &cache{cred: cred, source: "fake", now: func() time.Time { return clock }}
	cfg := openai.Azure.Config("gpt4o")
	cfg.BaseURL, cfg.Token = openai.AzureBaseURL(srv.URL, "gpt4o", "2024-10-21"), c.token
	m, err := NewChatCompletions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
	for _, at := range []time.Duration{0, 54 * time.Minute, 56 * time.Minute} {
		clock = start.Add(at)
		if _, err := m.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21 auth=Bearer entra-1-abcdefgh api-key=",
		"/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21 auth=Bearer entra-1-abcdefgh api-key=",
		"/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21 auth=Bearer entra-2-abcdefgh api-key=",
	}
	if got := requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(cred.scopes) != 2 || cred.scopes[0] != "https://cognitiveservices.azure.com/.default" {
		t.Errorf("scopes %q", cred.scopes)
	}
}

// TestTokenError: a credential that fails fails the call with an error
// naming the source; nothing is sent.
func TestTokenError(t *testing.T) {
	srv, requests := azureServer(t)
	cred := &fakeCredential{err: errors.New("AzureCLICredential: Azure CLI not found on path")}
	cfg := openai.Azure.Config("gpt4o")
	cfg.BaseURL, cfg.Token, cfg.MaxRetries = srv.URL, Token(cred, "DefaultAzureCredential"), -1
	m, err := NewResponses(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "Entra ID token from DefaultAzureCredential") || !strings.Contains(err.Error(), "Azure CLI not found") {
		t.Fatalf("err = %v", err)
	}
	if n := len(requests()); n != 0 {
		t.Fatalf("%d requests sent without a token", n)
	}
}

// TestKeyKept: a config with an API key keeps it (api-key header), and
// no Entra credential is looked for.
func TestKeyKept(t *testing.T) {
	srv, requests := azureServer(t)
	cfg := openai.Azure.Config("gpt4o")
	cfg.BaseURL, cfg.APIKey = srv.URL, "az-key"
	m, err := NewChatCompletions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if got := requests(); len(got) != 1 || got[0] != "/openai/v1/chat/completions? auth= api-key=az-key" {
		t.Fatalf("requests %q", got)
	}
}
