package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet/mcp"
)

// The cost a Toolset adds to every model call when its list is current.
func BenchmarkToolsetTools(b *testing.B) {
	m := &memServer{server: newServer(0)}
	ts, err := mcp.Connect(context.Background(), m.config())
	if err != nil {
		b.Fatal(err)
	}
	defer ts.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ts.Tools(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// One tool call through a Toolset, in memory and over Streamable HTTP on
// loopback.
func BenchmarkToolsetCall(b *testing.B) {
	srv := newServer(0)
	hs := httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv.Server }, nil))
	defer hs.Close()
	m := &memServer{server: newServer(0)}
	for name, cfg := range map[string]mcp.ServerConfig{"memory": m.config(), "http": {URL: hs.URL}} {
		b.Run(name, func(b *testing.B) {
			ts, err := mcp.Connect(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer ts.Close()
			tools, _ := ts.Tools(context.Background())
			var weather interface {
				Call(context.Context, json.RawMessage) (string, error)
			}
			for _, t := range tools {
				if t.Spec().Name == "get_weather" {
					weather = t
				}
			}
			args := json.RawMessage(`{"city":"Paris"}`)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := weather.Call(context.Background(), args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	hs.CloseClientConnections()
}
