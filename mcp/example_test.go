package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

type EchoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

// An MCP server and an agent using its tools, in one process. A real server
// usually runs as a subprocess: connect with
// &sdkmcp.CommandTransport{Command: exec.Command("my-server")} instead.
func ExampleTools() {
	ctx := context.Background()

	// The server: one tool, "text.upper".
	server := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "text", Version: "v1.0.0"}, nil)
	sdkmcp.AddTool(server, &sdkmcp.Tool{Name: "text.upper", Description: "Upper-cases text."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in EchoArgs) (*sdkmcp.CallToolResult, any, error) {
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	serverTransport, clientTransport := sdkmcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer serverSession.Wait()

	// The client: connect, then turn the server's tools into runlet tools.
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "example", Version: "v1.0.0"}, nil)
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	tools, err := mcp.Tools(ctx, session, mcp.WithPrefix("text_"))
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Printf("%s: %s\n", t.Spec().Name, t.Spec().Description)
	}

	// A scripted model stands in for a provider so the example runs offline.
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_1", "text_text_upper", `{"text":"hello, mcp"}`)),
		runlettest.TextReply("Done."),
	)
	agent := &runlet.Agent{Model: model, Tools: tools}
	for ev, err := range runlet.NewRuntime().Stream(ctx, agent, "Shout 'hello, mcp'.") {
		if err != nil {
			log.Fatal(err)
		}
		switch ev := ev.(type) {
		case *runlet.ToolStarted:
			fmt.Printf("→ %s %s\n", ev.Call.Name, ev.Call.Arguments)
		case *runlet.ToolFinished:
			fmt.Printf("← %s\n", ev.Result.Content)
		case *runlet.RunFinished:
			fmt.Println(ev.Result.Output)
		}
	}
	// Output:
	// text_text_upper: Upper-cases text.
	// → text_text_upper {"text":"hello, mcp"}
	// ← HELLO, MCP
	// Done.
}

// A remote MCP server over Streamable HTTP, with a bearer token: the agent
// takes its tools through Agent.Toolsets, so a server whose tools change or
// that restarts is followed without restarting the agent.
func ExampleConnect() {
	ctx := context.Background()

	// A server on loopback standing in for a remote one, checking the token.
	server := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "text", Version: "v1.0.0"}, nil)
	sdkmcp.AddTool(server, &sdkmcp.Tool{Name: "upper", Description: "Upper-cases text."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in EchoArgs) (*sdkmcp.CallToolResult, any, error) {
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	mcpHandler := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return server }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer demo-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer hs.Close()

	ts, err := mcp.Connect(ctx, mcp.ServerConfig{
		Name:    "text",
		URL:     hs.URL, // such as "https://mcp.example.com/mcp"
		Headers: map[string]string{"Authorization": "Bearer demo-token"},
	}, mcp.WithPrefix("text_"))
	if err != nil {
		log.Fatal(err)
	}
	defer ts.Close()

	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("call_1", "text_upper", `{"text":"over http"}`)),
		runlettest.TextReply("Done."),
	)
	agent := &runlet.Agent{Model: model, Toolsets: []runlet.Toolset{ts}}
	res, err := runlet.NewRuntime().Run(ctx, agent, "Shout 'over http'.")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.Messages {
		for _, p := range m.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				fmt.Println(r.Content)
			}
		}
	}
	fmt.Println(res.Output)
	// Output:
	// OVER HTTP
	// Done.
}

// An agent served as an MCP tool. A real server runs on stdio
// (mcp.ServeStdio) for a client such as Claude Desktop, or over Streamable
// HTTP (mcp.HTTPHandler); here an SDK client calls it in process.
func ExampleAddAgent() {
	ctx := context.Background()
	model := runlettest.NewModel(runlettest.TextReply("Paris."))
	agent := &runlet.Agent{Name: "geo", Instructions: "Answer geography questions.", Model: model}

	server := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "geo", Version: "v1.0.0"}, nil)
	if err := mcp.AddAgent(server, mcp.AgentTool{Agent: agent, Description: "Answers geography questions."}); err != nil {
		log.Fatal(err)
	}
	serverTransport, clientTransport := sdkmcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer serverSession.Wait()

	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "client", Version: "v1.0.0"}, nil)
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &sdkmcp.CallToolParams{
		Name:      "geo",
		Arguments: map[string]any{"prompt": "What is the capital of France?"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*sdkmcp.TextContent).Text)
	// Output:
	// Paris.
}
