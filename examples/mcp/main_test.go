package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/runlet/runlet/runlettest"
)

// serveEnv, when set, makes the test binary the demo MCP server on stdin
// and stdout, so the tests can start it as a subprocess.
const serveEnv = "RUNLET_EXAMPLE_MCP_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := demoServer().Run(context.Background(), &sdkmcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func noEnv(string) string { return "" }

func TestInProcessScripted(t *testing.T) {
	var out, errs strings.Builder
	if err := run(t.Context(), nil, options{}, noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if want := "The tools say: Paris: sunny, 18°C; {\"fahrenheit\":64.4}\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
	}
	for _, want := range []string{
		`MCP server "demo": 2 tools: units_c_to_f, weather_forecast`,
		"a scripted model answers",
		`→ weather_forecast {"city":"Paris"}`,
		"← Paris: sunny, 18°C",
		`→ units_c_to_f {"celsius":18}`,
		`← {"fahrenheit":64.4}`,
	} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs.String())
		}
	}
}

// The server as a subprocess, over CommandTransport: this test binary
// re-executed as the demo server.
func TestSubprocess(t *testing.T) {
	t.Setenv(serveEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0") // a -race child would linger a second
	var out, errs strings.Builder
	if err := run(t.Context(), []string{os.Args[0]}, options{prefix: "demo_"}, noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if want := "The tools say: Paris: sunny, 18°C; {\"fahrenheit\":64.4}\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
	}
	if want := `2 tools: demo_units_c_to_f, demo_weather_forecast`; !strings.Contains(errs.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs.String())
	}
}

func TestBadCommand(t *testing.T) {
	var out, errs strings.Builder
	err := run(t.Context(), []string{"/nonexistent/mcp-server"}, options{}, noEnv, &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "connecting to the MCP server") {
		t.Errorf("err = %v", err)
	}
}

// A real adapter against a fake OpenAI server: the model gets the MCP
// tools' specs, sees a tool error, corrects itself and answers.
func TestLiveOpenAI(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "weather_forecast", Arguments: `{"city":"Atlantis"}`}}},
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "weather_forecast", Arguments: `{"city":"Tokyo"}`}}},
		runlettest.OpenAIChatReply{Text: "Clear and 21°C in Tokyo."},
	)
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL()) // the adapter reads the environment itself
	t.Setenv("OPENAI_API_KEY", "test")
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "test"}
	var out, errs strings.Builder
	if err := run(t.Context(), nil, options{question: "Weather in Tokyo?"}, func(k string) string { return env[k] }, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Clear and 21°C in Tokyo.\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if strings.Contains(errs.String(), "scripted") {
		t.Errorf("stderr mentions the scripted model:\n%s", errs.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first, last := string(reqs[0].Body), string(reqs[2].Body)
	for _, want := range []string{`"name":"weather_forecast"`, `"description":"Returns today's forecast for a city, in Celsius."`, `"city":{"type":"string","description":"the city, such as Paris"}`} {
		if !strings.Contains(first, want) {
			t.Errorf("first request lacks %s:\n%s", want, first)
		}
	}
	for _, want := range []string{`Error: no forecast for \"Atlantis\"; try Paris, London or Tokyo`, `Tokyo: clear, 21°C`} {
		if !strings.Contains(last, want) {
			t.Errorf("last request lacks %s:\n%s", want, last)
		}
	}
}

// The demo server over Streamable HTTP on loopback, reached by URL with a
// bearer token, as a remote server would be.
func TestRemoteDemo(t *testing.T) {
	var out, errs strings.Builder
	if err := run(t.Context(), nil, options{remoteDemo: true}, noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if want := "The tools say: Paris: sunny, 18°C; {\"fahrenheit\":64.4}\n"; out.String() != want {
		t.Errorf("stdout = %q, want %q", out.String(), want)
	}
	if want := `MCP server "demo": 2 tools: units_c_to_f, weather_forecast`; !strings.Contains(errs.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs.String())
	}
}

// A remote server that refuses the token: a clear error, without the token.
func TestRemoteUnauthorized(t *testing.T) {
	cfg, stop, err := server(nil, options{remoteDemo: true}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var out, errs strings.Builder
	o := options{url: cfg.URL, headers: headerFlag{"Authorization": "Bearer wrong-token"}}
	err = run(t.Context(), nil, o, noEnv, &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "connecting to the MCP server") || strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("err = %v", err)
	}
}
