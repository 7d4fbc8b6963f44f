// Command mcp is an agent using the tools of an MCP (Model Context Protocol)
// server. Give a command after -- and it starts that server as a subprocess,
// speaking MCP over its stdin and stdout; with -url it connects to a remote
// server over Streamable HTTP; with neither it uses a small demo server in
// the same process (-remote-demo: over HTTP on loopback, with a token).
//
//	go run ./examples/mcp                                        # demo server, scripted model (offline)
//	OPENAI_API_KEY=sk-... go run ./examples/mcp -q "Is it warm in Tokyo, in Fahrenheit?"
//	go run ./examples/mcp -- npx -y @modelcontextprotocol/server-everything
//	ANTHROPIC_API_KEY=sk-ant-... go run ./examples/mcp -q "Add 2 and 40." -- npx -y @modelcontextprotocol/server-everything
//	go run ./examples/mcp -prefix fs_ -- npx -y @modelcontextprotocol/server-filesystem /tmp
//	go run ./examples/mcp -remote-demo                           # the demo server over HTTP on loopback
//	go run ./examples/mcp -url https://mcp.example.com/mcp -header "Authorization: Bearer $TOKEN"
//
// The model is chosen as in examples/weather: -provider (openai,
// openai-responses or anthropic), else OPENAI_API_KEY, OPENAI_BASE_URL or
// -base-url (Chat Completions), else ANTHROPIC_API_KEY (Messages); -model,
// else RUNLET_MODEL, names the model. With none of them a scripted model
// (runlettest.NewModel) answers instead, and says so on stderr: with the
// demo server it calls both tools in turn; with another server it lists the
// tools it was given.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// options are the command's flags.
type options struct {
	question, prefix         string
	provider, baseURL, model string
	url                      string
	headers                  headerFlag
	remoteDemo               bool
}

// headerFlag collects -header "Name: value".
type headerFlag map[string]string

func (h headerFlag) String() string { return fmt.Sprint(len(h), " headers") }

func (h headerFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf(`want "Name: value", got %q`, s)
	}
	h[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

func main() {
	var o options
	flag.StringVar(&o.question, "q", "", "the question (default: one about the demo server's tools)")
	flag.StringVar(&o.prefix, "prefix", "", "put this before every tool name, such as fs_")
	flag.StringVar(&o.provider, "provider", "", "adapter: openai, openai-responses or anthropic (default: from the environment)")
	flag.StringVar(&o.baseURL, "base-url", "", "API root, such as http://localhost:11434/v1 for Ollama")
	flag.StringVar(&o.model, "model", "", "model name (default $RUNLET_MODEL, else the provider's default)")
	flag.StringVar(&o.url, "url", "", "a remote MCP server's endpoint (Streamable HTTP), instead of a command")
	o.headers = headerFlag{}
	flag.Var(o.headers, "header", `an HTTP header for -url, repeatable: -header "Authorization: Bearer $TOKEN"`)
	flag.BoolVar(&o.remoteDemo, "remote-demo", false, "serve the demo server over Streamable HTTP on loopback, with a bearer token, and connect to it by URL")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mcp [flags] [-- server command and arguments]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(context.Background(), flag.Args(), o, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}

// model picks the adapter from the flags, else the environment; scripted
// reports that none was configured and a scripted model answers instead.
func model(o options, getenv func(string) string) (m runlet.Model, scripted bool, err error) {
	name := cmp.Or(o.model, getenv("RUNLET_MODEL"))
	provider := o.provider
	if provider == "" {
		switch {
		case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "" || o.baseURL != "":
			provider = "openai"
		case getenv("ANTHROPIC_API_KEY") != "":
			provider = "anthropic"
		default:
			return scriptedModel(), true, nil
		}
	}
	switch provider {
	case "openai":
		return openai.NewChatCompletions(openai.Config{BaseURL: o.baseURL, Model: cmp.Or(name, "gpt-4o-mini")}), false, nil
	case "openai-responses":
		return openai.NewResponses(openai.Config{BaseURL: o.baseURL, Model: cmp.Or(name, "gpt-5-mini")}), false, nil
	case "anthropic":
		return anthropic.NewMessages(anthropic.Config{BaseURL: o.baseURL, Model: cmp.Or(name, "claude-sonnet-4-5")}), false, nil
	}
	return nil, false, fmt.Errorf("unknown -provider %q (want openai, openai-responses or anthropic)", provider)
}

// scriptedModel stands in for a provider. Given a forecast tool, it asks
// for Paris's forecast, converts the temperature with a c_to_f tool when
// there is one, then answers with what the tools said; given other tools,
// it lists them.
func scriptedModel() *runlettest.Model {
	celsius := regexp.MustCompile(`(-?[0-9.]+)°C`)
	m := runlettest.NewModel()
	m.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		tool := func(suffix string) string {
			for _, t := range req.Tools {
				if strings.HasSuffix(t.Name, suffix) {
					return t.Name
				}
			}
			return ""
		}
		var results []string
		for _, msg := range req.Messages {
			for _, p := range msg.Parts {
				if r, ok := p.(runlet.ToolResultPart); ok {
					results = append(results, r.Content)
				}
			}
		}
		forecast, convert := tool("forecast"), tool("c_to_f")
		switch {
		case len(results) == 0 && forecast != "":
			return runlettest.ToolCallReply(runlettest.Call("call_1", forecast, `{"city":"Paris"}`))
		case len(results) == 1 && convert != "" && celsius.MatchString(results[0]):
			c := celsius.FindStringSubmatch(results[0])[1]
			return runlettest.ToolCallReply(runlettest.Call("call_2", convert, `{"celsius":`+c+`}`))
		case len(results) > 0:
			return runlettest.TextReply("The tools say: " + strings.Join(results, "; "))
		}
		names := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			names[i] = t.Name
		}
		return runlettest.TextReply(fmt.Sprintf("I am a scripted model, so I call no tools. I was given %d: %s.", len(names), strings.Join(names, ", ")))
	}
	return m
}

// server says how to reach the MCP server: the command, else the URL,
// else the demo server, in process or (-remote-demo) over Streamable HTTP
// on loopback with a bearer token. stop stops a demo server.
func server(command []string, o options, stderr io.Writer) (cfg mcp.ServerConfig, stop func(), err error) {
	switch {
	case len(command) > 0:
		return mcp.ServerConfig{Name: filepath.Base(command[0]), Command: command[0], Args: command[1:],
			Stderr: stderr}, func() {}, nil // the server's logs go to stderr
	case o.url != "":
		return mcp.ServerConfig{URL: o.url, Headers: o.headers}, func() {}, nil
	case o.remoteDemo:
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return cfg, nil, err
		}
		demo := demoServer()
		mcpHandler := mcp.HTTPHandler(demo, nil)
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer demo-token" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			mcpHandler.ServeHTTP(w, r)
		})}
		go hs.Serve(ln)
		return mcp.ServerConfig{Name: "demo", URL: "http://" + ln.Addr().String() + "/mcp",
				Headers: map[string]string{"Authorization": "Bearer demo-token"}}, func() {
				hs.Close()
				for ss := range demo.Sessions() {
					ss.Close()
				}
			}, nil
	}
	// In process: every (re)connection gets a new in-memory pipe.
	demo := demoServer()
	var mu sync.Mutex
	var sessions []*sdkmcp.ServerSession
	connect := func(ctx context.Context) (sdkmcp.Connection, error) {
		serverTransport, clientTransport := sdkmcp.NewInMemoryTransports()
		ss, err := demo.Connect(ctx, serverTransport, nil)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return clientTransport.Connect(ctx)
	}
	return mcp.ServerConfig{Name: "demo", Transport: func() sdkmcp.Transport { return transportFunc(connect) }}, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ss := range sessions {
			ss.Wait() // ends when the client's session does
		}
	}, nil
}

// transportFunc is an sdkmcp.Transport made of a func.
type transportFunc func(ctx context.Context) (sdkmcp.Connection, error)

func (f transportFunc) Connect(ctx context.Context) (sdkmcp.Connection, error) { return f(ctx) }

func run(ctx context.Context, command []string, o options, getenv func(string) string, stdout, stderr io.Writer) error {
	m, scripted, err := model(o, getenv)
	if err != nil {
		return err
	}
	cfg, stop, err := server(command, o, stderr)
	if err != nil {
		return err
	}
	defer stop()
	// A Toolset follows the server: a changed tool list, a restart.
	ts, err := mcp.Connect(ctx, cfg,
		mcp.WithPrefix(o.prefix),
		// Bound every call; a real app might also require approval for
		// tools the server does not annotate as read-only.
		mcp.WithPolicy(func(*sdkmcp.Tool) runlet.ToolPolicy { return runlet.ToolPolicy{Timeout: time.Minute} }),
	)
	if err != nil {
		return fmt.Errorf("connecting to the MCP server: %w", err)
	}
	defer ts.Close()
	tools, err := ts.Tools(ctx)
	if err != nil {
		return err
	}
	if len(tools) == 0 {
		return errors.New("the MCP server offers no tools")
	}
	server := "MCP server"
	if info := ts.ServerInfo(); info != nil {
		server = fmt.Sprintf("MCP server %q", info.Name)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Spec().Name
	}
	fmt.Fprintf(stderr, "%s: %d tools: %s\n", server, len(tools), strings.Join(names, ", "))
	if scripted {
		fmt.Fprintln(stderr, "No OPENAI_API_KEY, OPENAI_BASE_URL or ANTHROPIC_API_KEY: a scripted model answers (offline).")
	}

	question := cmp.Or(o.question, "What's the weather in Paris, in Fahrenheit?")
	agent := &runlet.Agent{
		Name:         "mcp",
		Instructions: "Answer with the help of the tools. Never guess what a tool would return.",
		Model:        m,
		Toolsets:     []runlet.Toolset{ts},
		MaxTurns:     8,
	}
	for ev, err := range runlet.NewRuntime().Stream(ctx, agent, question) {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case *runlet.TextDelta:
			fmt.Fprint(stdout, ev.Delta)
		case *runlet.ToolStarted:
			fmt.Fprintf(stderr, "→ %s %s\n", ev.Call.Name, ev.Call.Arguments)
		case *runlet.ToolFinished:
			fmt.Fprintf(stderr, "← %s (%s)\n", ev.Result.Content, ev.Duration)
		case *runlet.RunFinished:
			fmt.Fprintln(stdout)
		}
	}
	return nil
}
