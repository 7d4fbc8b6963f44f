package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
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

	// A second call finds the recording used up: the agent's error says
	// what the recording is and how to go live, not that a connection to
	// api.openai.com failed.
	res, err = cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "capitals", Arguments: map[string]any{"prompt": "And France?"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdkmcp.TextContent).Text
	for _, want := range []string{"offline replay", "answers one recorded question", "to go live, set OPENAI_API_KEY"} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("second call: %q (error %v) lacks %q", text, res.IsError, want)
		}
	}
	if strings.Contains(text, "connection failed") || strings.Contains(text, "api.openai.com") {
		t.Errorf("second call: %q", text)
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

// startServeHTTP starts "runlet mcp serve --http" with args and extra
// environment, and returns the command, the URL it serves and a function
// returning everything it wrote to stderr so far.
func startServeHTTP(t *testing.T, env []string, args ...string) (*exec.Cmd, string, func() string) {
	t.Helper()
	cmd := serveCmd(t, args...)
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var (
		mu  sync.Mutex
		log strings.Builder
		url string
	)
	sc := bufio.NewScanner(stderr)
	for url == "" && sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if _, u, ok := strings.Cut(sc.Text(), "serving MCP at "); ok {
			url = u
		}
	}
	if url == "" {
		t.Fatalf("no address on stderr:\n%s", log.String())
	}
	go func() {
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	return cmd, url, func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
}

// stopServe sends SIGTERM and waits for a clean exit.
func stopServe(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
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

// "runlet mcp serve --http" on loopback, stopped by SIGTERM.
func TestMCPServeHTTP(t *testing.T) {
	cmd, url, _ := startServeHTTP(t, nil, "--http", "127.0.0.1:0")
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
	stopServe(t, cmd)
}

// initialize posts an initialize request to url with an Origin header (if
// not empty) and returns the status.
func initialize(t *testing.T, url, origin string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// "runlet mcp serve --http" refuses web pages of other origins (DNS
// rebinding) and bounds its sessions.
func TestMCPServeHTTPBounds(t *testing.T) {
	cmd, url, _ := startServeHTTP(t, nil, "--http", "127.0.0.1:0", "--allow-origin", "https://app.example.com", "--max-sessions", "2", "--session-timeout", "1h")
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"http://evil.example", http.StatusForbidden},
		{"http://localhost.evil.example", http.StatusForbidden},
		{"https://app.example.com", http.StatusOK},               // session 1
		{"", http.StatusOK},                                      // session 2
		{"http://localhost:6274", http.StatusServiceUnavailable}, // one session too many
	} {
		if got := initialize(t, url, tc.origin); got != tc.want {
			t.Errorf("Origin %q: %d, want %d", tc.origin, got, tc.want)
		}
	}
	stopServe(t, cmd)
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// With RUNLET_MCP_TOKEN set, a request without the bearer token (or with a
// wrong one) gets 401 and never reaches the agent; with it, the call works;
// the token appears nowhere in the output.
func TestMCPServeHTTPToken(t *testing.T) {
	const token = "s3cret-mcp-token-value"
	cmd, url, logs := startServeHTTP(t, []string{"RUNLET_MCP_TOKEN=" + token}, "--http", "127.0.0.1:0")
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", token} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || strings.Contains(string(body), token) {
			t.Errorf("Authorization %q: %d %q", auth, resp.StatusCode, body)
		}
	}
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(t.Context(), &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "runlet", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("call with the token: %+v, %v", res, err)
	}
	cs.Close()
	stopServe(t, cmd)
	if strings.Contains(logs(), token) {
		t.Errorf("the token reached stderr:\n%s", logs())
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
		{[]string{"mcp", "serve", "--http", ":0"}, exitUsage, "not a loopback address"},
		{[]string{"mcp", "serve", "--http", "0.0.0.0:0"}, exitUsage, "set RUNLET_MCP_TOKEN"},
		{[]string{"mcp", "serve", "--http", "example.com:8080"}, exitUsage, "not a loopback address"},
		{[]string{"run", "--mcp", "bad=" + os.DevNull + "/nonexistent", "hi"}, exitFailed, "mcp_servers.0 (bad)"},
		{[]string{"mcp", "serve", "--allow-origin", "https://app.example.com"}, exitUsage, "need --http"},
		{[]string{"mcp", "serve", "--http", "127.0.0.1:0", "--max-sessions", "x"}, exitUsage, "max-sessions"},
	} {
		r := runCLI(t, "", nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("runlet %v: want exit %d and %q\n%s", tc.args, tc.code, tc.want, r)
		}
	}
	// An empty token must not mean "no authentication".
	for _, token := range []string{"", "  "} {
		for _, addr := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
			r := runCLI(t, "", []string{"RUNLET_MCP_TOKEN=" + token}, "mcp", "serve", "--http", addr)
			if r.code != exitUsage || !strings.Contains(r.stderr, "RUNLET_MCP_TOKEN is set but empty") {
				t.Errorf("RUNLET_MCP_TOKEN=%q --http %s: want exit %d\n%s", token, addr, exitUsage, r)
			}
		}
	}
	if r := runCLI(t, "", nil, "help", "mcp"); r.code != 0 || !strings.Contains(r.stdout, "runlet mcp serve --config agent.yaml") {
		t.Errorf("help mcp: %s", r)
	}
}
