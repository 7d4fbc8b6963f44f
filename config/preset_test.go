package config_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
)

// provider: azure in a config file: the deployment URL's api-version
// stays on the request, the key goes in the api-key header.
func TestAzureFromConfig(t *testing.T) {
	var path, query, apiKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query, apiKey = r.URL.Path, r.URL.RawQuery, r.Header.Get("Api-Key")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	l := &config.Loader{}
	f, err := l.Decode("a.yaml", []byte("model:\n  provider: azure\n  name: my-deployment\n  api_key: az-key\n  base_url: "+srv.URL+"/openai/deployments/my-deployment?api-version=2024-10-21\n"))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Agent.Model.Generate(t.Context(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if path != "/openai/deployments/my-deployment/chat/completions" || query != "api-version=2024-10-21" || apiKey != "az-key" {
		t.Errorf("request %s?%s api-key %q", path, query, apiKey)
	}
}
