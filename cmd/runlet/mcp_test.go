package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet/runlettest"
)

// serveCmd is "runlet mcp serve" with args, offline (the bundled replay).
func serveCmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"mcp", "serve"}, args...)...)
	cmd.Env = cleanEnv(t)
	return cmd
}

// "runlet mcp serve" on stdio, driven by the SDK's client.
func TestMCPServeStdio(t *testing.T) {
	progress := make(chan string, 16)
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "v0"}, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Message
		}})
	cs, err := client.Connect(t.Context(), &sdkmcp.CommandTransport{Command: serveCmd(t, "--name", "capitals")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "capitals",
		Arguments: map[string]any{"prompt": "What is the capital of the UK?"}, Meta: sdkmcp.Meta{"progressToken": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdkmcp.TextContent).Text; res.IsError || !strings.Contains(text, "London") {
		t.Fatalf("result %q (error %v)", text, res.IsError)
	}
	for _, want := range []string{"turn 1: model call", "turn 1: calling get_capital", "turn 2: model call"} {
		if got := <-progress; got != want {
			t.Errorf("progress %q, want %q", got, want)
		}
	}
}

// Runlet calling Runlet: "runlet run --mcp" starts "runlet mcp serve" and
// the outer model calls the inner agent.
func TestRunWithMCPServer(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(
		runlettest.OpenAIChatReply{ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "inner_runlet", Arguments: `{"prompt":"Capital of the UK?"}`}}},
		runlettest.OpenAIChatReply{Text: "The inner agent says London."},
	)
	defer srv.Close()
	r := runCLI(t, "", nil, "run", "--base-url", srv.BaseURL(), "--model", "m", "--mcp", "inner="+bin+" mcp serve", "Ask the inner agent.")
	if r.code != 0 || r.stdout != "The inner agent says London.\n" || !strings.Contains(r.stderr, "→ inner_runlet") {
		t.Fatalf("%s", r)
	}
	body := srv.Requests()[1].JSON()
	msgs, _ := json.Marshal(body["messages"])
	if !strings.Contains(string(msgs), "The capital of the UK is London.") {
		t.Errorf("the outer model did not get the inner answer: %s", msgs)
	}
	tools, _ := json.Marshal(srv.Requests()[0].JSON()["tools"])
	if !strings.Contains(string(tools), `"name":"inner_runlet"`) {
		t.Errorf("tools sent: %s", tools)
	}
}

// "runlet mcp serve --http" on loopback, stopped by SIGTERM.
func TestMCPServeHTTP(t *testing.T) {
	cmd := serveCmd(t, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var url string
	sc := bufio.NewScanner(stderr)
	for url == "" && sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "serving MCP at "); ok {
			url = u
		}
	}
	if url == "" {
		t.Fatal("no address on stderr")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &sdkmcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "runlet", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %+v, %v", res, err)
	}
	cs.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("runlet mcp serve did not stop on SIGTERM")
	}
}

func TestMCPUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp"}, exitUsage, "want a subcommand"},
		{[]string{"mcp", "serve", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"mcp", "serve", "--http", "256.0.0.1:x"}, exitUsage, "--http 256.0.0.1:x"},
		{[]string{"run", "--mcp", "bad=" + os.DevNull + "/nonexistent", "hi"}, exitFailed, "mcp_servers.0 (bad)"},
	} {
		r := runCLI(t, "", nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("runlet %v: want exit %d and %q\n%s", tc.args, tc.code, tc.want, r)
		}
	}
	if r := runCLI(t, "", nil, "help", "mcp"); r.code != 0 || !strings.Contains(r.stdout, "runlet mcp serve --config agent.yaml") {
		t.Errorf("help mcp: %s", r)
	}
}
