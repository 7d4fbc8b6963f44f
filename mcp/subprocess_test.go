package mcp_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

// subprocessEnv makes the test binary an MCP server on stdio (see TestMain).
const subprocessEnv = "RUNLET_MCP_TEST_SERVER"

// serveSubprocess serves the test tools, plus "crash", which exits the
// process in the middle of a call.
func serveSubprocess() {
	srv := newServer(0)
	sdkmcp.AddTool(srv.Server, &sdkmcp.Tool{Name: "crash", Description: "Exits the server."},
		func(context.Context, *sdkmcp.CallToolRequest, struct{}) (*sdkmcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	sdkmcp.AddTool(srv.Server, &sdkmcp.Tool{Name: "pid", Description: "The server's process ID."},
		func(context.Context, *sdkmcp.CallToolRequest, struct{}) (*sdkmcp.CallToolResult, struct{ PID int }, error) {
			return nil, struct{ PID int }{os.Getpid()}, nil
		})
	if err := srv.Run(context.Background(), &sdkmcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

func TestToolsetSubprocessRestart(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	ts := connectToolset(t, mcp.ServerConfig{Name: "sub", Command: exe, Args: []string{"-test.run=^$"},
		Env: map[string]string{subprocessEnv: "1"}}, mcp.WithRetry(3, time.Millisecond))
	tools := currentTools(t, ts)
	if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
		t.Fatalf("call: %q, %v", out, err)
	}
	pid1, err := callTool(t, tools, "pid", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	// The server dies during a call: the call fails with a message for the
	// model, and the next call starts a new process.
	_, err = callTool(t, tools, "crash", `{}`)
	if err == nil || !strings.HasPrefix(err.Error(), "The connection to the MCP server sub broke during the call to crash") {
		t.Fatalf("crash: err = %v", err)
	}
	pid2, err := callTool(t, tools, "pid", `{}`)
	if err != nil || pid2 == pid1 {
		t.Fatalf("after the crash: pid %s (was %s), %v", pid2, pid1, err)
	}
}

// The server process dies in the middle of a run: the model gets an error
// result for the call in flight, and its next call reaches a new process.
func TestSubprocessKilledMidRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	ts := connectToolset(t, mcp.ServerConfig{Name: "sub", Command: exe, Args: []string{"-test.run=^$"},
		Env: map[string]string{subprocessEnv: "1"}}, mcp.WithPrefix("sub_"), mcp.WithRetry(3, time.Millisecond))
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("1", "sub_crash", `{}`)),
		runlettest.ToolCallReply(runlettest.Call("2", "sub_get_weather", `{"city":"Paris"}`)),
		runlettest.TextReply("Sunny."),
	)
	res, err := runlet.NewRuntime().Run(t.Context(), &runlet.Agent{Model: model, Toolsets: []runlet.Toolset{ts}}, "weather?")
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(res)
	if len(r) != 2 || !r[0].IsError || !strings.Contains(r[0].Content, "broke during the call to crash") ||
		r[1].IsError || r[1].Content != "Paris: sunny, 18°C" {
		t.Fatalf("results %+v", r)
	}
}
