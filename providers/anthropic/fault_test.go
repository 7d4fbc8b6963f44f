package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

var hello = runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("hello")}, ChunkSize: 2}

func anthropicErr(typ, msg string) string {
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_x"}`
}

// TestHTTPErrors runs every status through Generate and Stream: retryable
// ones are retried up to MaxRetries (default 2) and then reported; the
// others fail at once.
func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		status    int
		typ       string
		retryable bool
	}{
		{400, "invalid_request_error", false},
		{401, "authentication_error", false},
		{403, "permission_error", false},
		{404, "not_found_error", false},
		{408, "", true},
		{413, "request_too_large", false},
		{429, "rate_limit_error", true},
		{500, "api_error", true},
		{502, "", true},
		{503, "", true},
		{529, "overloaded_error", true},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := http.StatusText(tt.status)
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				srv, m := newServerModel(t, Config{}, hello)
				f := runlettest.Fault{Status: tt.status, Header: http.Header{"Request-Id": {"req_x"}}}
				if tt.typ != "" {
					f.Body = anthropicErr(tt.typ, "it failed")
				}
				srv.InjectFault(f, f, f) // one more than the default budget of 2 retries

				var err error
				if stream {
					_, _, err = collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
				} else {
					_, err = m.Generate(ctxTimeout(t), userRequest("x"))
				}
				perr := requireProviderError(t, err)
				want := 1
				if tt.retryable {
					want = 3
				}
				if n := len(srv.Requests()); n != want {
					t.Errorf("%d requests, want %d", n, want)
				}
				if perr.StatusCode != tt.status || perr.Retryable != tt.retryable || perr.RequestID != "req_x" || perr.Type != tt.typ || perr.Provider != "anthropic" {
					t.Errorf("err = %#v", *perr)
				}
				if tt.typ != "" && perr.Message != "it failed" {
					t.Errorf("message %q", perr.Message)
				}
				if tt.typ == "" && perr.Message == "" {
					t.Error("empty message")
				}

				// With one fault fewer the last retry succeeds.
				if tt.retryable {
					srv.InjectFault(f, f)
					if stream {
						_, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
						if err != nil || resp.Message.Text() != "hello" {
							t.Errorf("after retries: %v %v", resp, err)
						}
					} else {
						srv.Enqueue(hello)
						resp, err := m.Generate(ctxTimeout(t), userRequest("x"))
						if err != nil || resp.Message.Text() != "hello" {
							t.Errorf("after retries: %v %v", resp, err)
						}
					}
				}
			})
		}
	}
}

func TestRetryBudget(t *testing.T) {
	for retries, want := range map[int]int{-1: 1, 0: 3, 1: 2, 4: 5} {
		srv, m := newServerModel(t, Config{MaxRetries: retries})
		f := runlettest.Fault{Status: 529, Body: anthropicErr("overloaded_error", "Overloaded")}
		srv.InjectFault(f, f, f, f, f, f)
		_, err := m.Generate(ctxTimeout(t), userRequest("x"))
		requireProviderError(t, err)
		if n := len(srv.Requests()); n != want {
			t.Errorf("MaxRetries %d: %d requests, want %d", retries, n, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for _, h := range []http.Header{{"Retry-After-Ms": {"150"}}, {"Retry-After": {"0.15"}}} {
		srv, m := newServerModel(t, Config{}, hello)
		srv.InjectFault(runlettest.Fault{Status: 429, Header: h, Body: anthropicErr("rate_limit_error", "slow down")})
		start := time.Now()
		resp, err := m.Generate(ctxTimeout(t), userRequest("x"))
		if err != nil || resp.Message.Text() != "hello" {
			t.Fatalf("%v %v", resp, err)
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("%v: retried after %v", h, d)
		}
	}
	// A Retry-After too long to honour falls back to the backoff, and the
	// error reports it when retries are off.
	srv, m := newServerModel(t, Config{MaxRetries: -1})
	srv.InjectFault(runlettest.Fault{Status: 429, Header: http.Header{"Retry-After": {"30"}}})
	_, err := m.Generate(ctxTimeout(t), userRequest("x"))
	if perr := requireProviderError(t, err); perr.RetryAfter != 30*time.Second || !perr.Retryable {
		t.Errorf("err = %#v", *perr)
	}
}

func TestConnectionReset(t *testing.T) {
	t.Run("generate retried", func(t *testing.T) {
		srv, m := newServerModel(t, Config{}, hello)
		srv.InjectFault(runlettest.Fault{Reset: true})
		resp, err := m.Generate(ctxTimeout(t), userRequest("x"))
		if err != nil || resp.Message.Text() != "hello" || len(srv.Requests()) != 2 {
			t.Fatalf("%v %v, %d requests", resp, err, len(srv.Requests()))
		}
	})
	t.Run("generate no retries", func(t *testing.T) {
		srv, m := newServerModel(t, Config{MaxRetries: -1}, hello)
		srv.InjectFault(runlettest.Fault{Reset: true})
		_, err := m.Generate(ctxTimeout(t), userRequest("x"))
		if perr := requireProviderError(t, err); !perr.Retryable {
			t.Errorf("err = %#v", *perr)
		}
	})
	t.Run("stream before first delta retried", func(t *testing.T) {
		srv, m := newServerModel(t, Config{}, hello, hello)
		srv.InjectFault(runlettest.Fault{Reset: true, AfterEvents: 3}) // message_start, block start, ping
		deltas, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		if err != nil || resp.Message.Text() != "hello" || joined(deltas, runlet.StreamTextDelta, 0) != "hello" {
			t.Fatalf("%v %v", resp, err)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("%d requests", n)
		}
	})
	t.Run("stream after a delta", func(t *testing.T) {
		srv, m := newServerModel(t, Config{}, hello, hello)
		srv.InjectFault(runlettest.Fault{Reset: true, AfterEvents: 4})
		deltas, _, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		perr := requireProviderError(t, err)
		if !errors.Is(err, runlet.ErrStreamIncomplete) || !perr.Retryable || len(deltas) != 1 || deltas[0].Delta != "he" {
			t.Errorf("err = %#v, deltas %+v", *perr, deltas)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests: retried after a delta was yielded", n)
		}
	})
}

func TestTruncation(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		srv, m := newServerModel(t, Config{}, hello)
		srv.InjectFault(runlettest.Fault{Truncate: true, AfterEvents: 5})
		deltas, _, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		if perr := requireProviderError(t, err); !errors.Is(err, runlet.ErrStreamIncomplete) || !perr.Retryable || len(deltas) != 2 {
			t.Errorf("err = %#v, %d deltas", *perr, len(deltas))
		}
		if !strings.Contains(err.Error(), "message_stop") {
			t.Errorf("unclear error: %v", err)
		}
	})
	t.Run("stream before deltas retried", func(t *testing.T) {
		srv, m := newServerModel(t, Config{}, hello, hello)
		srv.InjectFault(runlettest.Fault{Truncate: true, AfterEvents: 1})
		_, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		if err != nil || resp.Message.Text() != "hello" || len(srv.Requests()) != 2 {
			t.Fatalf("%v %v", resp, err)
		}
	})
	t.Run("generate", func(t *testing.T) {
		// A body cut off halfway is retried like a failed request.
		srv, m := newServerModel(t, Config{MaxRetries: -1}, hello)
		srv.InjectFault(runlettest.Fault{Truncate: true})
		_, err := m.Generate(ctxTimeout(t), userRequest("x"))
		if perr := requireProviderError(t, err); !errors.Is(err, runlet.ErrStreamIncomplete) || !perr.Retryable || perr.StatusCode != 200 {
			t.Errorf("err = %#v", *perr)
		}
		srv, m = newServerModel(t, Config{}, hello, hello)
		srv.InjectFault(runlettest.Fault{Truncate: true})
		resp, err := m.Generate(ctxTimeout(t), userRequest("x"))
		if err != nil || resp.Message.Text() != "hello" || len(srv.Requests()) != 2 {
			t.Errorf("resp %v, err %v, %d requests", resp, err, len(srv.Requests()))
		}
	})
}

func TestMidStreamOverload(t *testing.T) {
	overloaded := &runlettest.AnthropicError{Type: "overloaded_error", Message: "Overloaded"}
	t.Run("before first delta: retried", func(t *testing.T) {
		r := hello
		r.Error, r.ErrorAfter = overloaded, 1
		srv, m := newServerModel(t, Config{}, r, hello)
		_, resp, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		if err != nil || resp.Message.Text() != "hello" || len(srv.Requests()) != 2 {
			t.Fatalf("%v %v", resp, err)
		}
	})
	t.Run("after deltas: typed retryable error", func(t *testing.T) {
		r := hello
		r.Error, r.ErrorAfter = overloaded, 5
		srv, m := newServerModel(t, Config{}, r, hello)
		deltas, _, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		perr := requireProviderError(t, err)
		if perr.Type != "overloaded_error" || perr.Message != "Overloaded" || !perr.Retryable || perr.StatusCode != 0 || perr.RequestID != "req_runlettest_1" {
			t.Errorf("err = %#v", *perr)
		}
		if len(deltas) != 2 || len(srv.Requests()) != 1 {
			t.Errorf("%d deltas, %d requests", len(deltas), len(srv.Requests()))
		}
	})
	t.Run("generate: HTTP 529", func(t *testing.T) {
		r := hello
		r.Error = overloaded
		srv, m := newServerModel(t, Config{MaxRetries: -1}, r)
		_, err := m.Generate(ctxTimeout(t), userRequest("x"))
		if perr := requireProviderError(t, err); perr.StatusCode != 529 || perr.Type != "overloaded_error" || !perr.Retryable {
			t.Errorf("err = %#v", *perr)
		}
		if len(srv.Requests()) != 1 {
			t.Error("retried with MaxRetries -1")
		}
	})
}

func TestHTMLErrorBody(t *testing.T) {
	const page = "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n"
	srv, m := newServerModel(t, Config{MaxRetries: -1})
	srv.InjectFault(runlettest.Fault{Status: 502, Body: page, Header: http.Header{"Content-Type": {"text/html"}}})
	_, err := m.Generate(ctxTimeout(t), userRequest("x"))
	perr := requireProviderError(t, err)
	if perr.StatusCode != 502 || strings.ContainsAny(perr.Message, "<>") || !strings.Contains(perr.Message, "502 Bad Gateway") || !perr.Retryable {
		t.Errorf("err = %#v", *perr)
	}

	// An HTML page with status 200 (a captive portal, say).
	srv2, m2 := newServerModel(t, Config{MaxRetries: -1}, runlettest.AnthropicResponse{Body: []byte(page)})
	_ = srv2
	_, err = m2.Generate(ctxTimeout(t), userRequest("x"))
	perr = requireProviderError(t, err)
	if !strings.Contains(perr.Message, "malformed response") || !strings.Contains(perr.Message, "502 Bad Gateway") || strings.Contains(perr.Message, "<") {
		t.Errorf("err = %#v", *perr)
	}
	// ... and as a "stream".
	srv2.Enqueue(runlettest.AnthropicResponse{Body: []byte(page)})
	_, _, err = collect(t, m2.Stream(ctxTimeout(t), userRequest("x")))
	requireProviderError(t, err)
}

// hangingServer writes the start of a stream, then waits for the client to
// go away.
func hangingServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(sseBody("message_start", evStart,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCancellation(t *testing.T) {
	t.Run("deadline mid-stream", func(t *testing.T) {
		m := newTestModel(hangingServer(t).URL, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, _, err := collect(t, m.Stream(ctx, userRequest("x")))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
		noSecret(t, err)
	})
	t.Run("retry wait past the deadline", func(t *testing.T) {
		// The server asks for a longer wait than the deadline leaves (or
		// the backoff would take): its 529 comes back at once, with
		// RetryAfter, never a bare deadline error.
		for _, after := range []string{"30", ""} {
			srv, m := newServerModel(t, Config{}, hello)
			srv.InjectFault(runlettest.Fault{Status: 529, Header: http.Header{"Retry-After": {after}}})
			m.cfg.client.MinBackoff, m.cfg.client.MaxBackoff = 30*time.Second, 30*time.Second
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := m.Generate(ctx, userRequest("x"))
			perr := requireProviderError(t, err)
			if perr.StatusCode != 529 || (after != "" && perr.RetryAfter != 30*time.Second) || errors.Is(err, context.DeadlineExceeded) ||
				time.Since(start) > 20*time.Second || len(srv.Requests()) != 1 { // not the 30 s wait
				t.Errorf("Retry-After %q: err = %v after %v", after, err, time.Since(start))
			}
		}
	})
}

// TestAPIKeyNeverInErrors drives the error paths with a key in the config
// (and one in a base URL's query) and checks none of them shows it. The
// server does get it, as x-api-key.
func TestAPIKeyNeverInErrors(t *testing.T) {
	srv, m := newServerModel(t, Config{MaxRetries: -1}, hello)
	srv.RequireAPIKey(testKey)
	if _, err := m.Generate(ctxTimeout(t), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("X-Api-Key"); got != testKey {
		t.Fatalf("x-api-key = %q", got)
	}

	for _, f := range []runlettest.Fault{{Status: 500}, {Reset: true}, {Truncate: true, AfterEvents: 2}} {
		srv.InjectFault(f)
		srv.Enqueue(hello)
		_, _, err := collect(t, m.Stream(ctxTimeout(t), userRequest("x")))
		requireProviderError(t, err)
	}

	// Connection refused, with the key in the URL too.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, base := range []string{"http://" + addr, "http://user:" + testKey + "@" + addr + "/?key=" + testKey} {
		dead := newTestModel(base, Config{MaxRetries: 1})
		_, err = dead.Generate(ctxTimeout(t), userRequest("x"))
		if perr := requireProviderError(t, err); !perr.Retryable || !strings.Contains(perr.Message, "connection") {
			t.Errorf("err = %#v", *perr)
		}
		_, _, err = collect(t, dead.Stream(ctxTimeout(t), userRequest("x")))
		requireProviderError(t, err)
	}

	// A server that echoes the key back.
	srv.InjectFault(runlettest.Fault{Status: 401, Body: anthropicErr("authentication_error", "invalid x-api-key: "+testKey)})
	_, err = m.Generate(ctxTimeout(t), userRequest("x"))
	if perr := requireProviderError(t, err); !strings.Contains(perr.Message, "invalid x-api-key: [REDACTED]") {
		t.Errorf("err = %v", err)
	}
	_, echo := newServerModel(t, Config{MaxRetries: -1}, runlettest.AnthropicResponse{Body: sseBody("message_start", evStart,
		"error", anthropicErr("overloaded_error", "key "+testKey+" is overloaded"))})
	_, _, err = collect(t, echo.Stream(ctxTimeout(t), userRequest("x")))
	if perr := requireProviderError(t, err); perr.Message != "key [REDACTED] is overloaded" || perr.Type != "overloaded_error" {
		t.Errorf("err = %v", err)
	}
	_, echo = newServerModel(t, Config{MaxRetries: -1}, runlettest.AnthropicResponse{Body: sseBody("message_start", `{"type":"message_start","message":{"id":"`+testKey)})
	_, _, err = collect(t, echo.Stream(ctxTimeout(t), userRequest("x")))
	if requireProviderError(t, err); !errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("err = %v", err)
	}
	_, echo = newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: []byte("<p>your key " + testKey + "</p>")})
	_, err = echo.Generate(ctxTimeout(t), userRequest("x"))
	if requireProviderError(t, err); !errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("err = %v", err)
	}

	// Invalid options, malformed bodies.
	_, err = m.Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, Options: map[string]any{"model": 1}})
	requireProviderError(t, err)
	_, bad := newServerModel(t, Config{}, runlettest.AnthropicResponse{Body: []byte("{not json")})
	_, err = bad.Generate(ctxTimeout(t), userRequest("x"))
	requireProviderError(t, err)
}

func TestRedactWrappedError(t *testing.T) {
	m := newTestModel("http://127.0.0.1:1", Config{})
	cause := fmt.Errorf("%w: read from https://proxy/?key=%s: %w", runlet.ErrStreamIncomplete, testKey, context.DeadlineExceeded)
	err := m.cfg.client.Redact(&runlet.ProviderError{Provider: "anthropic", Message: "failed for " + testKey, Code: testKey, RequestID: testKey, Err: cause})
	noSecret(t, err)
	if !errors.Is(err, runlet.ErrStreamIncomplete) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("sentinels lost: %v", err)
	}
	if !strings.Contains(err.Error(), "failed for [REDACTED]") || !strings.Contains(err.Error(), "key=[REDACTED]") {
		t.Errorf("err = %v", err)
	}
	// Other errors and errors without the key pass unchanged.
	plain := errors.New("x")
	if m.cfg.client.Redact(plain) != plain || m.cfg.client.Redact(nil) != nil {
		t.Error("changed an error without a key")
	}
}
