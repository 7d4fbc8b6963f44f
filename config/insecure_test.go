package config_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
)

// offMachine counts the requests that would leave the machine; none do.
type offMachine struct{ n atomic.Int32 }

func (o *offMachine) RoundTrip(req *http.Request) (*http.Response, error) {
	o.n.Add(1)
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// TestAllowInsecureHTTP: a model section whose key would go over plain
// HTTP off loopback fails its calls with an error naming
// allow_insecure_http, for every provider; with allow_insecure_http: true
// the request goes out. An mcp_servers entry takes the same key.
func TestAllowInsecureHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, p := range config.Providers() {
		for _, allow := range []bool{false, true} {
			tr := &offMachine{}
			yaml := "model: {provider: " + p + ", name: m, api_key: k-1234567, base_url: 'http://api.example.com/v1', max_retries: 0"
			if allow {
				yaml += ", allow_insecure_http: true"
			}
			l := &config.Loader{HTTPClient: &http.Client{Transport: tr}}
			f, err := l.Decode("p.yaml", []byte(yaml+"}\n"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := l.Build(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Agent.Model.Generate(ctx, &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
			switch {
			case allow && tr.n.Load() == 0:
				t.Errorf("%s: allow_insecure_http: true, yet nothing was sent: %v", p, err)
			case !allow && (tr.n.Load() != 0 || err == nil || !strings.Contains(err.Error(), "allow_insecure_http")):
				t.Errorf("%s: sent %d requests, err = %v; want a refusal naming allow_insecure_http", p, tr.n.Load(), err)
			}
		}
	}
	f, err := (&config.Loader{}).Decode("m.yaml", []byte("model: {provider: openai, name: m}\nmcp_servers:\n  - {name: s, url: 'http://mcp.example.com/', headers: {X-Token: t}, allow_insecure_http: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.MCPServers[0].ServerConfig(nil).AllowInsecureHTTP {
		t.Error("allow_insecure_http did not reach mcp.ServerConfig")
	}
}
