package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
	"github.com/runlet/runlet/runlettest"
)

// transportFunc is an sdkmcp.Transport made of a func.
type transportFunc func(ctx context.Context) (sdkmcp.Connection, error)

func (f transportFunc) Connect(ctx context.Context) (sdkmcp.Connection, error) { return f(ctx) }

// memServer serves a test server over a new in-memory pipe for each
// connection; the test can take it down and break its connections.
type memServer struct {
	*server
	mu       sync.Mutex
	dials    int
	down     bool
	conns    []sdkmcp.Connection
	sessions []*sdkmcp.ServerSession
}

func newMemServer(t *testing.T) *memServer {
	m := &memServer{server: newServer(0)}
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, ss := range m.sessions {
			ss.Wait()
		}
	})
	return m
}

func (m *memServer) config() mcp.ServerConfig {
	return mcp.ServerConfig{Name: "mem", Transport: func() sdkmcp.Transport {
		return transportFunc(func(ctx context.Context) (sdkmcp.Connection, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.dials++
			if m.down {
				return nil, errors.New("connection refused")
			}
			st, ct := sdkmcp.NewInMemoryTransports()
			ss, err := m.Connect(context.Background(), st, nil)
			if err != nil {
				return nil, err
			}
			conn, err := ct.Connect(ctx)
			if err != nil {
				ss.Close()
				return nil, err
			}
			m.conns, m.sessions = append(m.conns, conn), append(m.sessions, ss)
			return conn, nil
		})
	}}
}

func (m *memServer) setDown(down bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = down
}

// breakConns closes the client ends of every connection, as a network
// failure would.
func (m *memServer) breakConns() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		c.Close()
	}
	m.conns = nil
}

func (m *memServer) dialCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dials
}

func connectToolset(t *testing.T, cfg mcp.ServerConfig, opts ...mcp.Option) *mcp.Toolset {
	t.Helper()
	ts, err := mcp.Connect(t.Context(), cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return ts
}

func currentTools(t *testing.T, ts *mcp.Toolset) map[string]runlet.Tool {
	t.Helper()
	tools, err := ts.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return toolsByName(t, tools)
}

func callTool(t *testing.T, tools map[string]runlet.Tool, name, args string) (string, error) {
	t.Helper()
	tool, ok := tools[name]
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	return tool.Call(t.Context(), json.RawMessage(args))
}

// bearer lets only requests with the token through to h.
func bearer(token string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestToolsetRemote(t *testing.T) {
	srv := newServer(0)
	getServer := func(*http.Request) *sdkmcp.Server { return srv.Server }
	for _, tc := range []struct {
		name    string
		sse     bool
		handler http.Handler
	}{
		{"streamable HTTP", false, sdkmcp.NewStreamableHTTPHandler(getServer, nil)},
		{"SSE", true, sdkmcp.NewSSEHandler(getServer, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(bearer("s3cret", tc.handler))
			defer hs.Close()
			ts := connectToolset(t, mcp.ServerConfig{URL: hs.URL, SSE: tc.sse,
				Headers: map[string]string{"Authorization": "Bearer s3cret"}}, mcp.WithPrefix("w_"))
			out, err := callTool(t, currentTools(t, ts), "w_get_weather", `{"city":"Paris"}`)
			if err != nil || out != "Paris: sunny, 18°C" {
				t.Fatalf("call = %q, %v", out, err)
			}
			_, err = mcp.Connect(t.Context(), mcp.ServerConfig{URL: hs.URL + "?key=s3cret", SSE: tc.sse}, mcp.WithRetry(2, time.Millisecond))
			var auth *mcp.AuthError
			if !errors.As(err, &auth) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("without the header: err = %v; want an AuthError that names no secret", err)
			}
			ts.Close()
			hs.CloseClientConnections()
		})
	}
}

func TestToolsetConfigErrors(t *testing.T) {
	for _, cfg := range []mcp.ServerConfig{{}, {Command: "x", URL: "http://127.0.0.1:1/"}} {
		if _, err := mcp.Connect(t.Context(), cfg); !errors.Is(err, mcp.ErrNoServer) {
			t.Errorf("Connect(%+v) = %v, want ErrNoServer", cfg, err)
		}
	}
}

func TestToolsetListChangedMidRun(t *testing.T) {
	t.Run("in-memory", func(t *testing.T) {
		m := newMemServer(t)
		testListChanged(t, m.server, m.config())
	})
	t.Run("streamable HTTP", func(t *testing.T) {
		srv := newServer(0)
		hs := httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv.Server }, nil))
		defer hs.Close()
		defer hs.CloseClientConnections()
		testListChanged(t, srv, mcp.ServerConfig{Name: "mem", URL: hs.URL})
	})
}

// testListChanged runs an agent whose first tool call changes the server's
// tools.
func testListChanged(t *testing.T, m *server, cfg mcp.ServerConfig) {
	sdkmcp.AddTool(m.Server, &sdkmcp.Tool{Name: "install", Description: "Installs the extra tool."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, _ struct{}) (*sdkmcp.CallToolResult, any, error) {
			sdkmcp.AddTool(m.Server, &sdkmcp.Tool{Name: "extra", Description: "New."},
				func(context.Context, *sdkmcp.CallToolRequest, struct{}) (*sdkmcp.CallToolResult, any, error) {
					return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "extra ran"}}}, nil, nil
				})
			m.RemoveTools("fail")
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "installed"}}}, nil, nil
		})
	changed := make(chan struct{}, 8)
	ts := connectToolset(t, cfg, mcp.WithPrefix("t_"), mcp.WithToolsChanged(func() { changed <- struct{}{} }))
	before := currentTools(t, ts)

	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("1", "t_install", `{}`)),
		runlettest.ToolCallReply(runlettest.Call("2", "t_extra", `{}`), runlettest.Call("3", "t_fail", `{}`)),
		runlettest.TextReply("done"),
	)
	// The notification travels apart from the call's result: wait for it
	// before the next model call, as a slower model would.
	hooks := runlet.Hooks{AfterToolCall: func(ctx context.Context, call runlet.ToolCallPart, _ *runlet.ToolResultPart) error {
		if call.Name == "t_install" {
			select {
			case <-changed:
			case <-ctx.Done():
			}
		}
		return nil
	}}
	agent := &runlet.Agent{Model: model, Toolsets: []runlet.Toolset{ts}}
	res, err := runlet.NewRuntime(runlet.WithHooks(hooks)).Run(t.Context(), agent, "install, then use it")
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if got := specs(reqs[0].Tools); strings.Contains(got, "t_extra") || !strings.Contains(got, "t_fail") {
		t.Errorf("first model call saw %s", got)
	}
	if got := specs(reqs[1].Tools); !strings.Contains(got, "t_extra") || strings.Contains(got, "t_fail") {
		t.Errorf("second model call saw %s, want t_extra and no t_fail", got)
	}
	results := toolResults(res)
	if len(results) != 3 || results[1].Content != "extra ran" || !results[2].IsError || !strings.Contains(results[2].Content, `unknown tool "t_fail"`) {
		t.Fatalf("results = %+v", results)
	}

	// A tool kept from an older list tells the model the server dropped it.
	_, err = callTool(t, before, "t_fail", `{}`)
	if err == nil || err.Error() != "The tool fail is no longer offered by the MCP server mem." {
		t.Errorf("calling a dropped tool: %v", err)
	}
	ts.Close()
}

func TestToolsetCancellation(t *testing.T) {
	srv := newServer(0)
	hs := httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv.Server }, nil))
	defer hs.Close()
	defer hs.CloseClientConnections()
	ts := connectToolset(t, mcp.ServerConfig{URL: hs.URL})
	tools := currentTools(t, ts)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := tools["wait"].Call(ctx, json.RawMessage(`{}`))
		errc <- err
	}()
	<-srv.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if err := <-srv.cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("the server's handler saw %v", err)
	}
	// The connection is still good.
	if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
		t.Fatalf("after cancelling: %q, %v", out, err)
	}
	ts.Close()
}

func TestToolsetReconnects(t *testing.T) {
	m := newMemServer(t)
	ts := connectToolset(t, m.config(), mcp.WithRetry(3, time.Millisecond))
	tools := currentTools(t, ts)

	// A call in flight when the connection breaks fails with a message for
	// the model.
	errc := make(chan error, 1)
	go func() {
		_, err := tools["wait"].Call(t.Context(), json.RawMessage(`{}`))
		errc <- err
	}()
	<-m.started
	m.breakConns()
	err := <-errc
	if err == nil || !strings.Contains(err.Error(), "The connection to the MCP server mem broke during the call to wait") {
		t.Fatalf("in-flight call: err = %v", err)
	}
	// The next call reconnects.
	if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
		t.Fatalf("after reconnecting: %q, %v", out, err)
	}
	if n := m.dialCount(); n != 2 {
		t.Errorf("dials = %d, want 2", n)
	}

	// A server that stays down: bounded attempts, then an error result.
	m.setDown(true)
	m.breakConns()
	waitDisconnected(t, ts, m)
	dials := m.dialCount()
	_, err = callTool(t, tools, "get_weather", `{"city":"Paris"}`)
	if err == nil || !strings.HasPrefix(err.Error(), "The MCP server mem is unavailable (mcp: connecting to mem (3 attempts): connection refused)") {
		t.Fatalf("server down: err = %v", err)
	}
	if n := m.dialCount() - dials; n != 3 {
		t.Errorf("dials = %d, want 3 attempts", n)
	}
	// Tools keeps the last list while the server is down.
	if got := currentTools(t, ts); len(got) != len(tools) {
		t.Errorf("tools while down: %d, want %d", len(got), len(tools))
	}
	// Back up: the next call works.
	m.setDown(false)
	if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
		t.Fatalf("server back: %q, %v", out, err)
	}

	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Tools(t.Context()); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("Tools after Close: %v", err)
	}
	if _, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
}

// waitDisconnected waits until the toolset noticed its connection ended: the
// next Tools call dials again.
func waitDisconnected(t *testing.T, ts *mcp.Toolset, m *memServer) {
	t.Helper()
	for n := m.dialCount(); m.dialCount() == n; {
		if _, err := ts.Tools(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestToolsetHTTPServerRestart(t *testing.T) {
	var h atomic.Pointer[http.Handler]
	var servers []*sdkmcp.Server
	defer func() {
		for _, srv := range servers {
			for ss := range srv.Sessions() {
				ss.Close()
			}
		}
	}()
	restart := func() {
		srv := newServer(0)
		servers = append(servers, srv.Server)
		var handler http.Handler = sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv.Server }, nil)
		h.Store(&handler)
	}
	restart()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	defer hs.Close()
	ts := connectToolset(t, mcp.ServerConfig{URL: hs.URL}, mcp.WithRetry(3, time.Millisecond))
	tools := currentTools(t, ts)
	for i := range 2 {
		if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
			t.Fatalf("call %d: %q, %v", i, out, err)
		}
		restart() // the old sessions are gone
	}
	ts.Close()
	hs.CloseClientConnections()
}

func specs(tools []runlet.ToolSpec) string {
	var b strings.Builder
	for _, s := range tools {
		b.WriteString(s.Name + " ")
	}
	return b.String()
}

func toolResults(res *runlet.Result) []runlet.ToolResultPart {
	var out []runlet.ToolResultPart
	for _, msg := range res.Messages {
		for _, p := range msg.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// Many calls in parallel while the connection breaks and comes back: each
// call succeeds or fails with a message for the model; nothing races or
// leaks.
func TestToolsetConcurrentBreaks(t *testing.T) {
	m := newMemServer(t)
	ts := connectToolset(t, m.config(), mcp.WithRetry(5, time.Millisecond))
	tools := currentTools(t, ts)
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	for range 8 {
		wg.Go(func() {
			for range 25 {
				out, err := tools["get_weather"].Call(t.Context(), json.RawMessage(`{"city":"Paris"}`))
				switch {
				case err == nil && out == "Paris: sunny, 18°C":
					ok.Add(1)
				case err != nil && strings.HasPrefix(err.Error(), "The connection to the MCP server mem broke"):
					failed.Add(1)
				default:
					t.Errorf("call: %q, %v", out, err)
				}
				if _, err := ts.Tools(t.Context()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for range 5 {
		m.breakConns()
		time.Sleep(time.Millisecond) // spreads the breaks over the calls; any timing is valid
	}
	wg.Wait()
	if ok.Load()+failed.Load() != 200 {
		t.Errorf("%d succeeded, %d failed, want 200 in all", ok.Load(), failed.Load())
	}
	// Whatever happened, the next call works.
	if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
		t.Fatalf("after the breaks: %q, %v", out, err)
	}
}

// A server that closes idle HTTP sessions: the call after the expiry is
// sent again on a new session, and succeeds.
func TestToolsetHTTPSessionExpires(t *testing.T) {
	srv := newServer(0)
	// A session expires as the handler's SessionTimeout would expire it
	// (by closing it), but when the test says: a 20 ms timeout also expired
	// the reconnected session before the call on a busy machine.
	h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv.Server }, nil)
	var notFound atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status == http.StatusNotFound {
			notFound.Add(1)
		}
	}))
	defer hs.Close()
	defer hs.CloseClientConnections()
	ts := connectToolset(t, mcp.ServerConfig{URL: hs.URL}, mcp.WithRetry(3, time.Millisecond))
	tools := currentTools(t, ts)
	for i := range 2 {
		// Expire the session, and wait until the server dropped it.
		for ss := range srv.Sessions() {
			ss.Close()
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			n := 0
			for range srv.Sessions() {
				n++
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the session did not expire")
			}
		}
		if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
			t.Fatalf("call %d after the session expired: %q, %v", i, out, err)
		}
	}
	if notFound.Load() == 0 {
		t.Error("the server never answered 404 for an expired session")
	}
	ts.Close()
}

// statusWriter records the response status.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// The connection outlives the context that made it: a Toolset connected
// with a request's context, or reconnected during a call, keeps working
// after that context ends.
func TestToolsetOutlivesConnectContext(t *testing.T) {
	srv := newServer(0)
	getServer := func(*http.Request) *sdkmcp.Server { return srv.Server }
	for name, h := range map[string]http.Handler{
		"SSE":             sdkmcp.NewSSEHandler(getServer, nil),
		"streamable HTTP": sdkmcp.NewStreamableHTTPHandler(getServer, nil),
	} {
		t.Run(name, func(t *testing.T) {
			hs := httptest.NewServer(h)
			defer hs.Close()
			defer hs.CloseClientConnections()
			ctx, cancel := context.WithCancel(t.Context())
			ts, err := mcp.Connect(ctx, mcp.ServerConfig{URL: hs.URL, SSE: name == "SSE"})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			cancel()
			tools := currentTools(t, ts)
			for i := range 3 {
				if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
					t.Fatalf("call %d: %q, %v", i, out, err)
				}
			}
		})
	}
}
