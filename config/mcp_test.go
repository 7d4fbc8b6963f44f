package config_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

type cityArgs struct {
	City string `json:"city"`
}

// mcpServer is an MCP server on loopback with two tools, letting in only
// requests bearing the token.
func mcpServer(t *testing.T, token string) string {
	t.Helper()
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "weather", Version: "v0"}, nil)
	for _, name := range []string{"get_weather", "get_forecast"} {
		sdkmcp.AddTool(s, &sdkmcp.Tool{Name: name, Description: name},
			func(_ context.Context, _ *sdkmcp.CallToolRequest, in cityArgs) (*sdkmcp.CallToolResult, any, error) {
				return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: name + ": sunny in " + in.City}}}, nil, nil
			})
	}
	h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL
}

func TestMCPServers(t *testing.T) {
	url := mcpServer(t, "tok-1")
	yaml := `
model: {provider: openai, name: gpt-4o-mini, api_key: x}
mcp_servers:
  - name: weather
    url: ` + url + `
    headers: {Authorization: "Bearer ${WEATHER_TOKEN}"}
    tools: [get_weather]
  - name: guarded
    url: ` + url + `
    headers: {Authorization: "Bearer ${WEATHER_TOKEN}"}
    require_approval: true
`
	l := &config.Loader{LookupEnv: env("WEATHER_TOKEN", "tok-1")}
	f, err := l.Decode("agent.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.MCPServers[0]; got.Name != "weather" || got.Headers["Authorization"] != "Bearer tok-1" || len(got.Tools) != 1 {
		t.Fatalf("mcp_servers[0] = %+v", got)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	closer, err := setup.ConnectMCP(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "weather_get_weather", `{"city":"Oslo"}`)),
		runlettest.ToolCallReply(runlettest.Call("c2", "guarded_get_forecast", `{"city":"Oslo"}`)),
	)
	setup.Agent.Model = model
	res, err := setup.NewRuntime().Run(t.Context(), setup.Agent, "weather?")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range model.Requests()[0].Tools {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "weather_get_weather guarded_get_forecast guarded_get_weather" && got != "weather_get_weather guarded_get_weather guarded_get_forecast" {
		t.Errorf("tools = %s", got)
	}
	if res.Status != runlet.StateInterrupted || len(res.Pending) != 1 || res.Pending[0].Name != "guarded_get_forecast" {
		t.Errorf("status %s, pending %+v: want the guarded call waiting for approval", res.Status, res.Pending)
	}
	if r := res.Messages[2].Parts[0].(runlet.ToolResultPart); r.Content != "get_weather: sunny in Oslo" {
		t.Errorf("result %+v", r)
	}
}

func TestMCPServersErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"mcp_servers: [{command: x}]":                                 "name is required",
		"mcp_servers: [{name: a.b, command: x}]":                      `name "a.b" may hold only`,
		"mcp_servers: [{name: a, command: x}, {name: a, command: y}]": `server "a" is listed twice`,
		"mcp_servers: [{name: a}]":                                    "needs either command",
		"mcp_servers: [{name: a, command: x, url: 'http://h'}]":       "needs either command",
		"mcp_servers: [{name: a, url: 'ftp://h'}]":                    "want an http or https URL",
		"mcp_servers: [{name: a, command: x, sse: true}]":             "go with url",
		"mcp_servers: [{name: a, comand: x}]":                         "comand",
	} {
		_, err := (&config.Loader{}).Decode("agent.yaml", []byte("model: {provider: openai, name: m}\n"+yaml))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", yaml, err, want)
		}
	}

	// A server that cannot be reached fails ConnectMCP, naming it, and
	// without leaking the token.
	url := mcpServer(t, "right")
	l := &config.Loader{}
	f, err := l.Decode("agent.yaml", []byte("model: {provider: openai, name: m, api_key: x}\nmcp_servers: [{name: w, url: '"+url+"?token=wrong'}]"))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.ConnectMCP(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "mcp_servers.0 (w)") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("err = %v", err)
	}
}

// An entry's limits reach the client: a server listing more tools than
// max_tools fails ConnectMCP with the limit named.
func TestMCPServerLimits(t *testing.T) {
	url := mcpServer(t, "tok")
	l := &config.Loader{LookupEnv: env("TOKEN", "tok")}
	f, err := l.Decode("agent.yaml", []byte(`
model: {provider: openai, name: m, api_key: x}
mcp_servers:
  - name: w
    url: `+url+`
    headers: {Authorization: "Bearer ${TOKEN}"}
    limits: {connect_timeout: 10s, list_timeout: 5s, call_timeout: 1m, max_pages: 3, max_tools: 1, max_description_bytes: 100, max_schema_bytes: 1000, max_message_bytes: 65536}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := mcp.Limits{ConnectTimeout: 10 * time.Second, ListTimeout: 5 * time.Second, CallTimeout: time.Minute,
		MaxPages: 3, MaxTools: 1, MaxDescriptionBytes: 100, MaxSchemaBytes: 1000, MaxMessageBytes: 65536}
	if got := f.MCPServers[0].Limits; got != want {
		t.Fatalf("limits = %+v, want %+v", got, want)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	_, err = setup.ConnectMCP(t.Context(), nil)
	var le *mcp.LimitError
	if !errors.As(err, &le) || le.Limit != "MaxTools" {
		t.Fatalf("ConnectMCP: %v, want a LimitError on MaxTools", err)
	}

	if _, err := l.Decode("agent.yaml", []byte("model: {provider: openai, name: m}\nmcp_servers: [{name: a, command: x, limits: {max_tols: 1}}]")); err == nil || !strings.Contains(err.Error(), "max_tols") {
		t.Errorf("a misspelt limit: %v", err)
	}
}
