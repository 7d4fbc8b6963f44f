package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// httpServer serves tools with mcp.HTTPHandler on loopback; the cleanup
// closes every session it has.
func httpServer(t *testing.T, opts *mcp.HTTPOptions, tools ...runlet.Tool) (*httptest.Server, *sdkmcp.Server) {
	t.Helper()
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	if err := mcp.AddTools(s, append([]runlet.Tool{weather()}, tools...)...); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcp.HTTPHandler(s, opts))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		for ss := range s.Sessions() {
			ss.Close()
		}
		hs.Close()
	})
	return hs, s
}

// post sends body to url as an MCP client would, with extra headers given
// as name, value pairs, and returns the response with its body read.
func post(t *testing.T, url, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, string(b)
}

func connectHTTP(ctx context.Context, url string) (*sdkmcp.ClientSession, error) {
	return sdkmcp.NewClient(&sdkmcp.Implementation{Name: "c", Version: "v0"}, nil).
		Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true}, nil)
}

// A request from a web page of another origin is refused, as the MCP
// specification requires against DNS rebinding; loopback origins, listed
// ones and requests without Origin are served.
func TestHTTPHandlerOrigin(t *testing.T) {
	for _, tc := range []struct {
		allowed []string
		origins []string
		want    int
	}{
		{nil, nil, http.StatusOK},
		{nil, []string{"http://evil.example"}, http.StatusForbidden},
		{nil, []string{"https://localhost.evil.example"}, http.StatusForbidden},
		{nil, []string{"http://127.0.0.1.evil.example:8080"}, http.StatusForbidden},
		{nil, []string{"null"}, http.StatusForbidden},
		{nil, []string{"file://"}, http.StatusForbidden},
		{nil, []string{"http://localhost:6274"}, http.StatusOK},
		{nil, []string{"http://127.0.0.1:8080"}, http.StatusOK},
		{nil, []string{"http://[::1]:8080"}, http.StatusOK},
		{nil, []string{"http://localhost:6274", "http://evil.example"}, http.StatusForbidden},
		{[]string{"https://app.example.com"}, []string{"https://APP.example.com:443"}, http.StatusOK},
		{[]string{"https://app.example.com"}, []string{"http://app.example.com"}, http.StatusForbidden},
		{[]string{"https://app.example.com"}, []string{"https://app.example.com.evil.example"}, http.StatusForbidden},
		{[]string{"null"}, []string{"null"}, http.StatusOK},
		{[]string{"*"}, []string{"http://evil.example"}, http.StatusOK},
	} {
		hs, _ := httpServer(t, &mcp.HTTPOptions{AllowedOrigins: tc.allowed})
		var headers []string
		for _, o := range tc.origins {
			headers = append(headers, "Origin", o)
		}
		resp, body := post(t, hs.URL, initializeBody, headers...)
		if resp.StatusCode != tc.want {
			t.Errorf("allowed %q, Origin %q: %d %q, want %d", tc.allowed, tc.origins, resp.StatusCode, body, tc.want)
		}
		if tc.want == http.StatusOK && !strings.Contains(body, `"serverInfo"`) {
			t.Errorf("Origin %q: no initialize result: %q", tc.origins, body)
		}
	}
}

// A body over MaxRequestBytes is refused with 413 without being read
// whole; a body that takes over BodyTimeout to arrive gets 408.
func TestHTTPHandlerBodyBounds(t *testing.T) {
	hs, _ := httpServer(t, &mcp.HTTPOptions{BodyTimeout: 200 * time.Millisecond})
	huge := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`
	if resp, body := post(t, hs.URL, huge); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB body: %d %q, want 413", resp.StatusCode, body)
	}

	// A client that sends its headers and part of its body, then nothing.
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // hang guard
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		hs.Listener.Addr(), len(initializeBody), initializeBody[:20])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a stalled body got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("stalled body: %d, want 408", resp.StatusCode)
	}
}

// A client that stops reading its responses loses its connection after
// WriteTimeout, rather than hold the request for ever.
func TestHTTPHandlerStalledReader(t *testing.T) {
	huge := runlet.NewTool("huge", "Returns 16 MiB.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("x", 16<<20), nil
	})
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "runlet", Version: "v0"}, nil)
	if err := mcp.AddToolsWith(s, runlet.NewRuntime(runlet.WithMaxToolOutput(-1)), huge); err != nil {
		t.Fatal(err)
	}
	h := mcp.HTTPHandler(s, &mcp.HTTPOptions{WriteTimeout: 100 * time.Millisecond})
	ended := make(chan string, 16)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		ended <- r.Header.Get("X-Test")
	}))
	defer hs.Close()
	defer func() {
		for ss := range s.Sessions() {
			ss.Close()
		}
	}()
	resp, _ := post(t, hs.URL, initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	post(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")

	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"huge","arguments":{}}}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nX-Test: stalled\r\nContent-Length: %d\r\n\r\n%s", hs.Listener.Addr(), sid, len(body), body)
	// The client reads nothing; the server gives up writing.
	guard := time.After(30 * time.Second)
	for {
		select {
		case name := <-ended:
			if name != "stalled" {
				continue
			}
		case <-guard:
			t.Fatal("the request to a client that reads nothing never ended")
		}
		break
	}
}

// Sessions are bounded in number, and closed after SessionIdleTimeout
// without a request.
func TestHTTPHandlerSessions(t *testing.T) {
	hs, s := httpServer(t, &mcp.HTTPOptions{MaxSessions: 2})
	var sessions []*sdkmcp.ClientSession
	for range 2 {
		cs, err := connectHTTP(t.Context(), hs.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	if cs, err := connectHTTP(t.Context(), hs.URL); err == nil {
		cs.Close()
		t.Fatal("a third session was accepted")
	}
	resp, body := post(t, hs.URL, initializeBody)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "2 MCP sessions are open") {
		t.Errorf("third session: %d %q", resp.StatusCode, body)
	}
	// The open sessions work; once one is closed, a new one is accepted.
	if out, isErr := call(t, sessions[1], &sdkmcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}); isErr || out != "sunny" {
		t.Errorf("call: %q", out)
	}
	sessions[0].Close()
	waitFor(t, "the closed session to go", func() bool { return count(s.Sessions()) == 1 })
	cs, err := connectHTTP(t.Context(), hs.URL)
	if err != nil {
		t.Fatalf("after a session closed: %v", err)
	}
	cs.Close()

	// Idle sessions are closed.
	hs, s = httpServer(t, &mcp.HTTPOptions{SessionIdleTimeout: 50 * time.Millisecond})
	cs, err = connectHTTP(t.Context(), hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitFor(t, "the idle session to be closed", func() bool { return count(s.Sessions()) == 0 })
	if _, err := cs.CallTool(t.Context(), &sdkmcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}); err == nil {
		t.Error("a call on an expired session worked")
	}
}

func count[T any](seq func(func(T) bool)) int {
	n := 0
	for range seq {
		n++
	}
	return n
}

// waitFor polls cond until it holds, failing after a generous guard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Thousands of concurrent calls: at most MaxConcurrent run; the others get
// an error at once, and the server answers again when they are done.
func TestHTTPHandlerConcurrentCalls(t *testing.T) {
	const limit = 4
	var running, most atomic.Int32
	release := make(chan struct{})
	done := sync.OnceFunc(func() { close(release) })
	defer done() // before the server's cleanup, should the test fail
	blocks := runlet.NewTool("blocks", "Waits for the test.", func(ctx context.Context, _ struct{}) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	hs, _ := httpServer(t, &mcp.HTTPOptions{MaxConcurrent: limit}, blocks)
	cs, err := connectHTTP(t.Context(), hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // hang guard
	defer cancel()
	const calls = 1000
	var wg sync.WaitGroup
	var refused, succeeded atomic.Int32
	for range calls {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "blocks", Arguments: map[string]any{}})
			switch {
			case err != nil && ctx.Err() == nil:
				refused.Add(1)
			case err == nil && !res.IsError:
				succeeded.Add(1)
			}
		})
	}
	waitFor(t, "the refusals", func() bool { return refused.Load() >= calls-limit })
	done()
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("calls hung")
	}
	if most.Load() > limit || succeeded.Load()+refused.Load() != calls {
		t.Errorf("%d ran at once (limit %d); %d done, %d refused", most.Load(), limit, succeeded.Load(), refused.Load())
	}
	if out, isErr := call(t, cs, &sdkmcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}); isErr || out != "sunny" {
		t.Errorf("after the flood: %q", out)
	}
}

// Malformed and hostile JSON-RPC gets an error, not a crash, and the
// session goes on.
func TestHTTPHandlerMalformedMessages(t *testing.T) {
	hs, _ := httpServer(t, nil)
	resp, _ := post(t, hs.URL, initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	in := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"}
	post(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, in...)
	batch := make([]string, 1000)
	for i := range batch {
		batch[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}`, i+10)
	}
	bigArg, _ := json.Marshal(strings.Repeat("é", 400<<10))
	for _, body := range []string{
		``, `{`, `null`, `[]`, `"x"`, `{"jsonrpc":"2.0"}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":"Paris"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":` + string(bigArg) + `}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_weather","arguments":` + strings.Repeat("[", 300000) + `}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":null}`,
		"[" + strings.Join(batch, ",") + "]",
	} {
		resp, out := post(t, hs.URL, body, in...)
		if resp.StatusCode >= 500 {
			t.Errorf("%.60q: %d %.200q", body, resp.StatusCode, out)
		}
	}
	resp, out := post(t, hs.URL, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}`, in...)
	if resp.StatusCode != http.StatusOK || !strings.Contains(out, "sunny") {
		t.Errorf("the session after hostile messages: %d %q", resp.StatusCode, out)
	}
}

// Many clients sending large bodies at once: the heap grows by what
// MaxConcurrent bodies and calls hold, not by what every client sends.
func TestHTTPHandlerMemoryBound(t *testing.T) {
	echo := runlet.NewTool("echo", "Echoes.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	hs, _ := httpServer(t, &mcp.HTTPOptions{MaxConcurrent: 4}, echo)
	resp, _ := post(t, hs.URL, initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	in := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"}
	post(t, hs.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, in...)
	// Each request has its own ID and shares the rest.
	tail := []byte(`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 1000<<10) + `"}}}`)

	// Guard: past 1 GiB more, the clients stop, so a regression fails the
	// test rather than take the machine.
	const guard = 1 << 30
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			if ms.HeapAlloc > base+guard {
				cancel()
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	const clients = 200
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for i := range clients {
		wg.Go(func() {
			head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d`, i+10)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, io.MultiReader(strings.NewReader(head), bytes.NewReader(tail)))
			req.ContentLength = int64(len(head) + len(tail))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					refused.Add(1) // the server answered 503 and closed before reading the body
				}
				return
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			switch {
			case resp.StatusCode == http.StatusOK && strings.Contains(string(out), "xxxx"):
				ok.Add(1)
			case resp.StatusCode == http.StatusServiceUnavailable, strings.Contains(string(out), "server busy"):
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	grew := int64(peak.Load()) - int64(base)
	t.Logf("%d clients × %d KiB: %d answered, %d refused; heap grew by at most %d MiB", clients, len(tail)>>10, ok.Load(), refused.Load(), grew>>20)
	if ctx.Err() != nil || grew > 128<<20 {
		t.Errorf("heap grew by %d MiB (guard hit: %v)", grew>>20, ctx.Err() != nil)
	}
	if ok.Load() == 0 || ok.Load()+refused.Load() != clients {
		t.Errorf("%d answered, %d refused, of %d", ok.Load(), refused.Load(), clients)
	}
}
