package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet/mcp"
)

// rawTransports are the ways a test reaches a rawServer: over pipes as on
// stdio, and over Streamable HTTP with event-stream or JSON answers.
var rawTransports = []string{"stdio", "HTTP events", "HTTP JSON"}

// rawConfig is a ServerConfig reaching s over transport.
func rawConfig(t *testing.T, s *rawServer, transport string) mcp.ServerConfig {
	t.Helper()
	var h http.Handler
	switch transport {
	case "stdio":
		return s.config()
	case "HTTP events":
		h = s
	case "HTTP JSON":
		h = s.jsonHandler()
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return mcp.ServerConfig{Name: "raw", URL: hs.URL}
}

// answer handles method with f; other methods get the default.
func answer(method string, f func(c *rawConn, r *rawRequest)) func(c *rawConn, r *rawRequest) bool {
	return func(c *rawConn, r *rawRequest) bool {
		if r.Method != method {
			return false
		}
		f(c, r)
		return true
	}
}

// both combines two handlers.
func both(a, b func(c *rawConn, r *rawRequest) bool) func(c *rawConn, r *rawRequest) bool {
	return func(c *rawConn, r *rawRequest) bool { return a(c, r) || b(c, r) }
}

func never(*rawConn, *rawRequest) {}

var listOne = answer("tools/list", func(c *rawConn, r *rawRequest) { c.reply(r.ID, toolList("", "big", "small")) })

// A server that never answers, pages forever or lists too many tools:
// every wait ends, with a LimitError naming the limit.
func TestToolsetBoundedWaits(t *testing.T) {
	limits := mcp.Limits{ConnectTimeout: 300 * time.Millisecond, CallTimeout: 300 * time.Millisecond, MaxPages: 5, MaxTools: 10}
	var pages atomic.Int64
	tests := []struct {
		name         string
		handle       func(c *rawConn, r *rawRequest) bool
		connectLimit string // the limit Connect fails on, or "" if it works
	}{
		{"initialize never answered", answer("initialize", never), "ConnectTimeout"},
		{"tools/list never answered", answer("tools/list", never), "ConnectTimeout"},
		{"endless pages", answer("tools/list", func(c *rawConn, r *rawRequest) {
			pages.Add(1)
			c.reply(r.ID, toolList(fmt.Sprint("page", pages.Load()), fmt.Sprint("t", pages.Load())))
		}), "MaxPages"},
		{"too many tools", answer("tools/list", func(c *rawConn, r *rawRequest) {
			c.reply(r.ID, toolList("", strings.Fields("a b c d e f g h i j k")...))
		}), "MaxTools"},
		{"tools/call never answered", both(listOne, answer("tools/call", never)), ""},
	}
	for _, transport := range rawTransports {
		for _, tc := range tests {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				pages.Store(0)
				cfg := rawConfig(t, &rawServer{handle: tc.handle}, transport)
				start := time.Now()
				ts, err := mcp.Connect(t.Context(), cfg, mcp.WithLimits(limits), mcp.WithRetry(1, 0))
				if tc.connectLimit != "" {
					var le *mcp.LimitError
					if !errors.As(err, &le) || le.Limit != tc.connectLimit {
						t.Fatalf("Connect: %v, want a LimitError on %s", err, tc.connectLimit)
					}
					if tc.name == "endless pages" && pages.Load() != 5 {
						t.Errorf("%d pages asked for, want 5", pages.Load())
					}
				} else {
					if err != nil {
						t.Fatal(err)
					}
					defer ts.Close()
					_, err = callTool(t, currentTools(t, ts), "big", `{}`)
					var le *mcp.LimitError
					if !errors.As(err, &le) || le.Limit != "CallTimeout" || err.Error() != "mcp: the MCP server raw did not answer within 300ms (Limits.CallTimeout)" {
						t.Fatalf("call: %v, want a LimitError on CallTimeout", err)
					}
				}
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("took %v", d)
				}
			})
		}
	}
}

// A result larger than Limits.MaxMessageBytes fails the call with a
// LimitError, over every transport, without reading it whole; the next
// call works (on the same connection, or on a new one over HTTP, where
// the oversized message ends the connection).
func TestToolsetMessageTooLarge(t *testing.T) {
	const limit = 1 << 20
	for _, transport := range rawTransports {
		t.Run(transport, func(t *testing.T) {
			s := &rawServer{handle: both(listOne, answer("tools/call", func(c *rawConn, r *rawRequest) {
				if r.toolName() == "big" {
					c.reply(r.ID, text(strings.Repeat("x", 2*limit)))
				} else {
					c.reply(r.ID, text("small result"))
				}
			}))}
			ts := connectToolset(t, rawConfig(t, s, transport), mcp.WithLimits(mcp.Limits{MaxMessageBytes: limit}), mcp.WithRetry(2, time.Millisecond))
			tools := currentTools(t, ts)
			_, err := callTool(t, tools, "big", `{}`)
			var le *mcp.LimitError
			if !errors.As(err, &le) || le.Limit != "MaxMessageBytes" || le.Value != limit {
				t.Fatalf("big result: %v, want a LimitError on MaxMessageBytes", err)
			}
			if out, err := callTool(t, tools, "small", `{}`); err != nil || out != "small result" {
				t.Fatalf("the call after: %q, %v", out, err)
			}
		})
	}
}

// An HTTP server that answers a call with a body of 100 MB: the client
// reads no more than about Limits.MaxMessageBytes of it (the default, 16
// MiB), measured in bytes the server could write and in allocations.
func TestToolsetHugeHTTPBody(t *testing.T) {
	const huge = 100 << 20
	var written atomic.Int64
	s := &rawServer{handle: listOne}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"tools/call"`) {
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			s.ServeHTTP(w, r)
			return
		}
		var req rawRequest
		json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for written.Load() < huge { // at most 100 MB, whatever the client does
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
		io.WriteString(w, `"}]}}`)
	}))
	defer hs.Close()
	defer hs.CloseClientConnections()
	ts := connectToolset(t, mcp.ServerConfig{Name: "huge", URL: hs.URL})
	tools := currentTools(t, ts)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := callTool(t, tools, "big", `{}`)
	runtime.ReadMemStats(&after)
	var le *mcp.LimitError
	if !errors.As(err, &le) || le.Limit != "MaxMessageBytes" {
		t.Fatalf("call: %v, want a LimitError on MaxMessageBytes", err)
	}
	t.Logf("allocated %d MiB; the server wrote %d MiB", (after.TotalAlloc-before.TotalAlloc)>>20, written.Load()>>20)
	// About twice the limit: io.ReadAll doubles its buffer as it grows.
	bound := uint64(40 << 20)
	if raceEnabled {
		bound *= 2
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bound {
		t.Errorf("the call allocated %d MiB for a limit of 16 MiB", alloc>>20)
	}
	if w := written.Load(); w >= huge {
		t.Errorf("the server wrote all %d MiB", w>>20)
	}
}

// Bad JSON-RPC from the server (not JSON, a message of the wrong shape, a
// response to no request) fails the call or is ignored; nothing panics,
// and the next call works.
func TestToolsetMalformedMessages(t *testing.T) {
	for _, bad := range []string{
		`not json at all`,
		`{"jsonrpc":"2.0","id":"ID","result":`,
		`{"jsonrpc":"2.0","id":"ID","result":{"content":"not a list"}}`,
		`{"jsonrpc":"2.0","id":"ID","result":{"content":[{"type":"no-such-type"}]}}`,
		`{"jsonrpc":"2.0","id":987654,"result":{}}`,
		`{"jsonrpc":"2.0","id":"ID","error":{"code":"x"}}`,
		`[1,2,3]`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"ID\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}}",
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":[[[[[[]]]]]]}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	} {
		t.Run(bad, func(t *testing.T) {
			s := &rawServer{handle: both(listOne, answer("tools/call", func(c *rawConn, r *rawRequest) {
				if r.toolName() == "big" {
					c.send(strings.ReplaceAll(bad, `"ID"`, string(r.ID)))
				}
				c.reply(r.ID, text("fine"))
			}))}
			ts := connectToolset(t, s.config(), mcp.WithLimits(mcp.Limits{CallTimeout: time.Second}), mcp.WithRetry(2, time.Millisecond))
			tools := currentTools(t, ts)
			callTool(t, tools, "big", `{}`) // any outcome but a panic or a hang
			// A frame that is not JSON ends the connection (the stream
			// cannot be read past it), which a call may see; a new
			// connection follows.
			var err error
			for range 2 {
				var out string
				if out, err = callTool(t, tools, "small", `{}`); err == nil && out == "fine" {
					return
				}
			}
			t.Fatalf("the calls after: %v", err)
		})
	}
}

// What a server says about its tools is cleaned before a model or a log
// sees it; a tool whose schema is too large or invalid, or whose name is
// taken, is left out with a warning, and the others are kept.
func TestToolsetHostileToolList(t *testing.T) {
	s := &rawServer{}
	// Invalid UTF-8 cannot go through encoding/json; the server writes it raw.
	s.handle = answer("tools/list", func(c *rawConn, r *rawRequest) {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[`+
			`{"name":"ok","description":"Fine."},`+
			"{\"name\":\"utf8\",\"description\":\"bad \xff\xfe bytes\"},"+
			`{"name":"long","description":%q},`+
			`{"name":"ctrl","description":"a\u001b[31mred\u202eevil\u0000\nline\ttab"},`+
			`{"name":"bad\u001bname","description":"x"},`+
			`{"name":"bigschema","inputSchema":{"type":"object","description":%q}},`+
			`{"name":"badschema","inputSchema":{"type":42}},`+
			`{"name":"a.b","description":"first"},`+
			`{"name":"a_b","description":"takes a.b's name"}]}}`,
			r.ID, strings.Repeat("é", 600), strings.Repeat("s", 2000)))
	})
	var log strings.Builder
	ts := connectToolset(t, s.config(), mcp.WithLogger(slog.New(slog.NewTextHandler(&log, nil))),
		mcp.WithLimits(mcp.Limits{MaxDescriptionBytes: 100, MaxSchemaBytes: 1000}))
	tools := currentTools(t, ts)
	desc := map[string]string{}
	for name, tl := range tools {
		desc[name] = tl.Spec().Description
	}
	want := map[string]string{
		"ok":       "Fine.",
		"utf8":     "bad \uFFFD\uFFFD bytes",
		"a_b":      "first",
		"long":     strings.Repeat("é", 48) + "…",
		"ctrl":     "a[31mredevil\nline\ttab",
		"bad_name": "x",
	}
	if fmt.Sprint(desc) != fmt.Sprint(want) {
		t.Errorf("tools = %q\nwant    %q", desc, want)
	}
	for _, w := range []string{
		`tool left out" server=raw tool=bigschema reason="input schema: 2034 bytes, more than Limits.MaxSchemaBytes (1000)"`,
		`tool left out" server=raw tool=badschema`,
		`tool left out" server=raw tool=a_b reason="its name becomes a_b, as the name of a.b listed before it does"`,
		`tool description cut" server=raw tool=long bytes=1200 limit=100`,
	} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("the log lacks %s:\n%s", w, log.String())
		}
	}
}

// A server that answers 401 (or 403) is asked once, not again: the error
// says a token is needed and where it goes, and holds no secret. A token
// revoked mid-session fails the call the same way.
func TestToolsetUnauthorized(t *testing.T) {
	srv := newServer(0)
	t.Cleanup(func() { closeSessions(srv.Server) })
	h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv.Server }, nil)
	var token atomic.Value
	token.Store("s3cret")
	var refused atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token.Load().(string) {
			refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	defer hs.CloseClientConnections()

	_, err := mcp.Connect(t.Context(), mcp.ServerConfig{Name: "gh", URL: hs.URL,
		Headers: map[string]string{"Authorization": "Bearer wrong-t0ken"}}, mcp.WithRetry(5, time.Millisecond))
	var auth *mcp.AuthError
	if !errors.As(err, &auth) || auth.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Connect: %v, want an AuthError", err)
	}
	if msg := err.Error(); strings.Contains(msg, "wrong-t0ken") || !strings.Contains(msg, "needs a token") || !strings.Contains(msg, "Authorization") || !strings.Contains(msg, "headers") {
		t.Errorf("message: %s", msg)
	}
	// One attempt: the SDK's discovery and its fallback to initialize,
	// both refused; no more.
	if n := refused.Load(); n > 2 {
		t.Errorf("%d requests refused, want one attempt", n)
	}

	ts := connectToolset(t, mcp.ServerConfig{Name: "gh", URL: hs.URL,
		Headers: map[string]string{"Authorization": "Bearer s3cret"}}, mcp.WithRetry(5, time.Millisecond))
	tools := currentTools(t, ts)
	token.Store("rotated")
	refused.Store(0)
	for i := range 2 {
		_, err = callTool(t, tools, "get_weather", `{"city":"Paris"}`)
		if !errors.As(err, &auth) || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("call %d with a revoked token: %v, want an AuthError", i, err)
		}
	}
	if n := refused.Load(); n > 5 {
		t.Errorf("%d requests refused for two calls, want no retries", n)
	}
}

// A server that goes down and comes back at the same address: calls while
// it is down fail with a message for the model, and the first call after
// it is back works, on a new connection.
func TestToolsetServerDownThenUp(t *testing.T) {
	start := func(ln net.Listener) *httptest.Server {
		srv := newServer(0)
		t.Cleanup(func() { closeSessions(srv.Server) })
		hs := httptest.NewUnstartedServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv.Server }, nil))
		hs.Listener.Close()
		hs.Listener = ln
		hs.Start()
		return hs
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	hs := start(ln)
	ts := connectToolset(t, mcp.ServerConfig{Name: "down", URL: hs.URL}, mcp.WithRetry(2, time.Millisecond))
	tools := currentTools(t, ts)
	if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil {
		t.Fatalf("first call: %q, %v", out, err)
	}
	hs.CloseClientConnections()
	hs.Close()
	for i := range 2 {
		_, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`)
		if err == nil || !strings.HasPrefix(err.Error(), "The MCP server down is unavailable") && !strings.HasPrefix(err.Error(), "The connection to the MCP server down broke") {
			t.Fatalf("call %d while down: %v", i, err)
		}
	}
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	hs = start(ln)
	defer hs.Close()
	defer hs.CloseClientConnections()
	if out, err := callTool(t, tools, "get_weather", `{"city":"Paris"}`); err != nil || out != "Paris: sunny, 18°C" {
		t.Fatalf("first call after the server is back: %q, %v", out, err)
	}
	ts.Close()
}

// closeSessions ends the server's sessions, and their goroutines.
func closeSessions(s *sdkmcp.Server) {
	for ss := range s.Sessions() {
		ss.Close()
	}
}

// A server that stops answering tools/list after saying its tools changed:
// the next Tools returns the last list within Limits.ListTimeout, and the
// connection is dropped, so the one after connects again.
func TestToolsetListTimeout(t *testing.T) {
	var lists atomic.Int64
	s := &rawServer{handle: both(
		answer("tools/list", func(c *rawConn, r *rawRequest) {
			if lists.Add(1) == 1 {
				c.reply(r.ID, toolList("", "change"))
			}
		}),
		answer("tools/call", func(c *rawConn, r *rawRequest) {
			c.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			c.reply(r.ID, text("changed"))
		}),
	)}
	var log strings.Builder
	ts := connectToolset(t, s.config(), mcp.WithLimits(mcp.Limits{ListTimeout: 300 * time.Millisecond}),
		mcp.WithRetry(1, 0), mcp.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	tools := currentTools(t, ts)
	if out, err := callTool(t, tools, "change", `{}`); err != nil || out != "changed" {
		t.Fatalf("call: %q, %v", out, err)
	}
	start := time.Now()
	if got := currentTools(t, ts); len(got) != 1 || got["change"] == nil {
		t.Fatalf("tools after the list timed out: %v", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Tools took %v", d)
	}
	if !strings.Contains(log.String(), "did not answer within 300ms (Limits.ListTimeout)") {
		t.Errorf("log: %s", log.String())
	}
}
