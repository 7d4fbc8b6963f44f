package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
	"github.com/runlet/runlet/modelkit"
	"github.com/runlet/runlet/runlettest"
)

const testKey = "sk-test-key-0123456789"

// fastRetries makes backoff short for tests.
func fastRetries(m *ChatCompletions) *ChatCompletions {
	m.r.client.MinBackoff, m.r.client.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return m
}

// call runs one request, streaming or not, and returns the final response.
func call(m *ChatCompletions, ctx context.Context, stream bool) (*runlet.ModelResponse, error) {
	req := userReq("hi")
	if stream {
		return modelkit.Collect(m.Stream(ctx, req))
	}
	return m.Generate(ctx, req)
}

// validating wraps a client so that every request body it sends is checked
// against the OpenAPI schema.
func validating(t *testing.T, c *http.Client) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.GetBody != nil {
			if body, err := r.GetBody(); err == nil {
				b, _ := io.ReadAll(body)
				if err := openapitest.Check("CreateChatCompletionRequest", b); err != nil {
					t.Errorf("request does not match CreateChatCompletionRequest: %v\n%s", err, b)
				}
			}
		}
		return base.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func asProviderError(t *testing.T, err error) *runlet.ProviderError {
	t.Helper()
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v (%T), want a *runlet.ProviderError", err, err)
	}
	return pe
}

func TestChatRetries(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	rateLimit := `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	tests := []struct {
		name     string
		faults   []runlettest.Fault
		retries  int
		requests int // requests the server sees
		ok       bool
		status   int
	}{
		{"429 with Retry-After then success", []runlettest.Fault{{Status: 429, Header: hdr("Retry-After", "0.01"), Body: rateLimit}}, 2, 2, true, 0},
		{"429 with retry-after-ms then success", []runlettest.Fault{{Status: 429, Header: hdr("Retry-After-Ms", "5"), Body: rateLimit}}, 2, 2, true, 0},
		{"500s until the budget is spent", []runlettest.Fault{{Status: 500}, {Status: 502}, {Status: 503}}, 2, 3, false, 503},
		{"408 and 409 are retried", []runlettest.Fault{{Status: 408}, {Status: 409}}, 2, 3, true, 0},
		{"no retries configured", []runlettest.Fault{{Status: 503}}, -1, 1, false, 503},
		{"400 is not retried", []runlettest.Fault{{Status: 400, Body: `{"error":{"message":"bad","type":"invalid_request_error"}}`}}, 2, 1, false, 400},
		{"401 is not retried", []runlettest.Fault{{Status: 401, Body: `{"error":{"message":"no key","type":"invalid_request_error","code":"invalid_api_key"}}`}}, 2, 1, false, 401},
		{"404 is not retried", []runlettest.Fault{{Status: 404}}, 2, 1, false, 404},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "/generate", true: "/stream"}[stream], func(t *testing.T) {
				srv, m := chatTestServer(t, Config{MaxRetries: tt.retries}, runlettest.OpenAIChatReply{Text: "ok"})
				fastRetries(m)
				srv.InjectFault(tt.faults...)
				resp, err := call(m, context.Background(), stream)
				if got := len(srv.Requests()); got != tt.requests {
					t.Errorf("requests = %d, want %d", got, tt.requests)
				}
				if tt.ok {
					if err != nil || resp.Message.Text() != "ok" {
						t.Fatalf("err = %v", err)
					}
					return
				}
				pe := asProviderError(t, err)
				if pe.StatusCode != tt.status || pe.Provider != "openai" {
					t.Errorf("error = %+v", pe)
				}
			})
		}
	}
}

// A connection that drops before any response is retried; one that drops
// after the status line (the fake server's Reset fault flushes the headers
// first) is not: the response had begun. The error is retryable, so the
// caller may try again.
func TestChatConnectionResets(t *testing.T) {
	var hits atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(chatSSE(chunkHello, chunkFinish, "[DONE]"))
	}))
	defer hs.Close()
	m := fastRetries(NewChatCompletions(Config{BaseURL: hs.URL, APIKey: testKey, Model: "m", HTTPClient: validating(t, hs.Client()), MaxRetries: 2}))
	resp, err := call(m, context.Background(), true)
	if err != nil || resp.Message.Text() != "Hello" || hits.Load() != 2 {
		t.Fatalf("err = %v, hits = %d", err, hits.Load())
	}

	// The fake server's non-streaming Reset drops the connection before the
	// status line: retried. Its streaming Reset comes after the status line
	// but before any delta: retried too, since the caller saw nothing.
	srv, m := chatTestServer(t, Config{MaxRetries: 2}, runlettest.OpenAIChatReply{Text: "ok"}, runlettest.OpenAIChatReply{Text: "ok"})
	srv.InjectFault(runlettest.Fault{Reset: true})
	if resp, err := call(m, context.Background(), false); err != nil || resp.Message.Text() != "ok" || len(srv.Requests()) != 2 {
		t.Errorf("non-streaming reset: err = %v, %d requests", err, len(srv.Requests()))
	}
	srv, m = chatTestServer(t, Config{MaxRetries: 2}, runlettest.OpenAIChatReply{Text: "ok"}, runlettest.OpenAIChatReply{Text: "ok"})
	srv.InjectFault(runlettest.Fault{Reset: true})
	if resp, err := call(m, context.Background(), true); err != nil || resp.Message.Text() != "ok" || len(srv.Requests()) != 2 {
		t.Errorf("stream reset before any delta: err = %v, %d requests", err, len(srv.Requests()))
	}
}

// A stream that fails after a delta reached the caller is never retried;
// one that fails before is retried like a failed request.
func TestChatStreamFailuresAfterStart(t *testing.T) {
	tests := []struct {
		name  string
		fault runlettest.Fault
	}{
		{"reset", runlettest.Fault{Reset: true, AfterEvents: 3}},
		{"truncate", runlettest.Fault{Truncate: true, AfterEvents: 3}},
		{"truncate after finish, before usage", runlettest.Fault{Truncate: true, AfterEvents: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, m := chatTestServer(t, Config{MaxRetries: 3}, runlettest.OpenAIChatReply{Text: "Hello, world!"}, runlettest.OpenAIChatReply{Text: "again"})
			fastRetries(m)
			srv.ChunkSize = 2 // role + 7 text chunks + finish + usage
			srv.InjectFault(tt.fault)
			events, resp, err := collect(m.Stream(context.Background(), userReq("hi")))
			pe := asProviderError(t, err)
			if !errors.Is(err, runlet.ErrStreamIncomplete) || !pe.Retryable || resp != nil {
				t.Errorf("err = %v (retryable %v), want ErrStreamIncomplete", err, pe.Retryable)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("requests = %d: a started stream was retried", n)
			}
			if len(events) == 0 {
				t.Errorf("no deltas before the failure")
			}
		})
	}
	t.Run("truncate before any delta is retried", func(t *testing.T) {
		srv, m := chatTestServer(t, Config{MaxRetries: 3}, runlettest.OpenAIChatReply{Text: "Hello, world!"}, runlettest.OpenAIChatReply{Text: "again"})
		fastRetries(m)
		srv.InjectFault(runlettest.Fault{Truncate: true})
		_, resp, err := collect(m.Stream(context.Background(), userReq("hi")))
		if err != nil || resp == nil || resp.Message.Text() != "again" || len(srv.Requests()) != 2 {
			t.Errorf("err = %v, resp = %+v, %d requests", err, resp, len(srv.Requests()))
		}
	})
	t.Run("without retries the error is final", func(t *testing.T) {
		srv, m := chatTestServer(t, Config{MaxRetries: -1}, runlettest.OpenAIChatReply{Text: "Hello, world!"})
		srv.InjectFault(runlettest.Fault{Truncate: true})
		_, _, err := collect(m.Stream(context.Background(), userReq("hi")))
		if pe := asProviderError(t, err); !errors.Is(err, runlet.ErrStreamIncomplete) || !pe.Retryable || len(srv.Requests()) != 1 {
			t.Errorf("err = %v, %d requests", err, len(srv.Requests()))
		}
	})
}

// A non-streamed body cut off halfway is retried like a failed request
// (as a stream cut off before its first delta is); without retries it is a
// retryable ErrStreamIncomplete.
func TestChatGenerateTruncatedBody(t *testing.T) {
	srv, m := chatTestServer(t, Config{MaxRetries: -1}, runlettest.OpenAIChatReply{Text: "Hello"})
	srv.InjectFault(runlettest.Fault{Truncate: true})
	_, err := m.Generate(context.Background(), userReq("hi"))
	pe := asProviderError(t, err)
	if !errors.Is(err, runlet.ErrStreamIncomplete) || !pe.Retryable || pe.RequestID != "req_runlettest_1" {
		t.Errorf("err = %v %+v", err, pe)
	}
	srv, m = chatTestServer(t, Config{MaxRetries: 2}, runlettest.OpenAIChatReply{Text: "cut"}, runlettest.OpenAIChatReply{Text: "Hello"})
	fastRetries(m)
	srv.InjectFault(runlettest.Fault{Truncate: true})
	got, err := m.Generate(context.Background(), userReq("hi"))
	if err != nil || got.Message.Text() != "Hello" || len(srv.Requests()) != 2 {
		t.Errorf("got %v, err %v, %d requests", got, err, len(srv.Requests()))
	}
}

// A 200 body that holds an error envelope saying the server is overloaded
// is retried, as the same error in a stream or an HTTP status would be.
func TestChatGenerateRetriesErrorBody(t *testing.T) {
	srv, m := chatTestServer(t, Config{MaxRetries: 2},
		runlettest.OpenAIChatReply{Body: []byte(`{"error":{"message":"Overloaded","type":"overloaded_error"}}`)},
		runlettest.OpenAIChatReply{Text: "Hello"})
	fastRetries(m)
	got, err := m.Generate(context.Background(), userReq("hi"))
	if err != nil || got.Message.Text() != "Hello" || len(srv.Requests()) != 2 {
		t.Errorf("got %v, err %v, %d requests", got, err, len(srv.Requests()))
	}
}

func TestChatMidStreamError(t *testing.T) {
	// Without retries, so that errors before the first delta stay visible
	// (with retries they would be retried; see TestChatStreamFailuresAfterStart).
	for _, after := range []int{0, 1, 3} {
		srv, m := chatTestServer(t, Config{MaxRetries: -1}, runlettest.OpenAIChatReply{
			Text:  "partial text that must not succeed",
			Error: &runlettest.OpenAIChatError{Type: "server_error", Message: "The server had an error while processing your request."}, ErrorAfter: after,
		})
		srv.ChunkSize = 3
		events, resp, err := collect(m.Stream(context.Background(), userReq("hi")))
		pe := asProviderError(t, err)
		if pe.Type != "server_error" || !pe.Retryable || pe.Message != "The server had an error while processing your request." || resp != nil {
			t.Errorf("after %d: %+v", after, pe)
		}
		if len(events) != max(0, after-1) { // the role chunk yields nothing
			t.Errorf("after %d: %d deltas", after, len(events))
		}
		if pe.RequestID != "req_runlettest_1" {
			t.Errorf("request id = %q", pe.RequestID)
		}
		if len(srv.Requests()) != 1 {
			t.Errorf("retried a stream")
		}
	}
	// A non-streaming request gets the error as an HTTP status.
	_, m := chatTestServer(t, Config{}, runlettest.OpenAIChatReply{Error: &runlettest.OpenAIChatError{Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "slow down"}})
	pe := asProviderError(t, func() error { _, err := m.Generate(context.Background(), userReq("hi")); return err }())
	if pe.StatusCode != 429 || !pe.Retryable || pe.Code != "rate_limit_exceeded" {
		t.Errorf("%+v", pe)
	}
}

func TestChatMalformedChunk(t *testing.T) {
	body := chatSSE(chunkRole, chunkHello, `{"id":"c1","choices":[{"index":0,"delta":{"content":"x"}}`, chunkFinish, "[DONE]")
	srv, m := chatTestServer(t, Config{MaxRetries: 2}, runlettest.OpenAIChatReply{Body: body})
	events, _, err := collect(m.Stream(context.Background(), userReq("hi")))
	pe := asProviderError(t, err)
	if !errors.Is(err, runlet.ErrMalformedStream) || pe.Retryable || len(events) != 1 {
		t.Errorf("err = %v, events %d", err, len(events))
	}
	if len(srv.Requests()) != 1 {
		t.Error("retried")
	}
	// A malformed non-streamed body too.
	_, m = chatTestServer(t, Config{}, runlettest.OpenAIChatReply{Body: []byte(`{"choices": [}`)})
	if _, err := m.Generate(context.Background(), userReq("hi")); !errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("generate err = %v", err)
	}
	_, m = chatTestServer(t, Config{}, runlettest.OpenAIChatReply{Body: []byte(`{"id":"x","choices":[]}`)})
	if _, err := m.Generate(context.Background(), userReq("hi")); !errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("generate without choices: err = %v", err)
	}
}

func TestChatHTMLErrorBody(t *testing.T) {
	html := "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
	for _, stream := range []bool{false, true} {
		srv, m := chatTestServer(t, Config{MaxRetries: 1}, runlettest.OpenAIChatReply{Text: "never"})
		fastRetries(m)
		f := runlettest.Fault{Status: 502, Body: html, Header: http.Header{"Content-Type": {"text/html"}}}
		srv.InjectFault(f, f)
		_, err := call(m, context.Background(), stream)
		pe := asProviderError(t, err)
		if pe.StatusCode != 502 || !pe.Retryable || pe.Message != "502 Bad Gateway 502 Bad Gateway nginx" {
			t.Errorf("%+v", pe)
		}
		if len(srv.Requests()) != 2 {
			t.Errorf("requests = %d, want 2", len(srv.Requests()))
		}
	}
	// A 200 with an HTML page instead of JSON or an event stream.
	for _, stream := range []bool{false, true} {
		srv, m := chatTestServer(t, Config{}, runlettest.OpenAIChatReply{Text: "never"})
		srv.InjectFault(runlettest.Fault{Status: 200, Body: "<html><body>Login required</body></html>", Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}})
		_, err := call(m, context.Background(), stream)
		if pe := asProviderError(t, err); !errors.Is(err, runlet.ErrMalformedStream) || !strings.Contains(pe.Message, "Login required") {
			t.Errorf("stream=%v: err = %v", stream, err)
		}
	}
}

func TestChatCancellation(t *testing.T) {
	t.Run("retry wait past the deadline", func(t *testing.T) {
		// The server asks for more time than the deadline leaves: its 429
		// comes back at once, with RetryAfter, not a bare deadline error.
		srv, m := chatTestServer(t, Config{MaxRetries: 3}, runlettest.OpenAIChatReply{Text: "never"})
		srv.InjectFault(runlettest.Fault{Status: 429, Header: http.Header{"Retry-After": {"30"}}})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := m.Generate(ctx, userReq("hi"))
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || pe.StatusCode != 429 || pe.RetryAfter != 30*time.Second || errors.Is(err, context.DeadlineExceeded) ||
			time.Since(start) > 20*time.Second || len(srv.Requests()) != 1 { // not the 30 s wait
			t.Fatalf("err = %v after %v", err, time.Since(start))
		}
	})
	t.Run("waiting for headers and for the body", func(t *testing.T) {
		for _, stalled := range []string{"headers", "body"} {
			release := make(chan struct{})
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if stalled == "body" {
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(200)
					_, _ = io.WriteString(w, "data: "+chunkHello+"\n\n")
					w.(http.Flusher).Flush()
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			m := NewChatCompletions(Config{BaseURL: hs.URL, APIKey: testKey, Model: "m", HTTPClient: validating(t, hs.Client()), MaxRetries: -1})
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			for _, stream := range []bool{false, true} {
				if _, err := call(m, ctx, stream); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s stream=%v: err = %v", stalled, stream, err)
				}
			}
			cancel()
			close(release)
			hs.Close()
		}
	})
}

// The API key never appears in an error, even when a server echoes it
// back in an error body, a stream error event or an HTML page.
func TestChatAPIKeyNeverInErrors(t *testing.T) {
	modes := []string{"401", "html", "stream-error", "stream-data-error", "200-error", "malformed"}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch r.URL.Query().Get("mode") {
		case "401":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+auth+`","type":"`+auth+`","code":"`+auth+`"}}`)
		case "html":
			w.WriteHeader(403)
			_, _ = io.WriteString(w, "<html><body>Forbidden for "+auth+"</body></html>")
		case "stream-error":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: error\ndata: {\"error\":{\"message\":\"bad key "+auth+"\",\"type\":\"server_error\"}}\n\n")
		case "stream-data-error":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"error\":{\"message\":\"key "+auth+"\"}}\n\n")
		case "200-error":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"error":{"message":"key `+auth+`"}}`)
		case "malformed":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "oops "+auth)
		}
	}))
	defer hs.Close()
	for _, mode := range modes {
		for _, stream := range []bool{false, true} {
			// The base URL carries the mode in its query; the adapter appends
			// the path after it, so put the mode in a path-safe way.
			m := NewChatCompletions(Config{BaseURL: hs.URL, APIKey: testKey, Model: "m", HTTPClient: validating(t, hs.Client()), MaxRetries: -1})
			m.url = hs.URL + "/chat/completions?mode=" + mode
			_, err := call(m, context.Background(), stream)
			if err == nil {
				t.Fatalf("%s: no error", mode)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "0123456789") {
				t.Errorf("%s stream=%v: the key leaked: %v", mode, stream, err)
			}
			var pe *runlet.ProviderError
			if errors.As(err, &pe) && (strings.Contains(pe.Message+pe.Code+pe.Type, testKey)) {
				t.Errorf("%s: key in fields: %+v", mode, pe)
			}
		}
	}
	// A transport error names the URL without its user info or query.
	m := NewChatCompletions(Config{BaseURL: "http://user:" + testKey + "@127.0.0.1:1/v1?key=" + testKey, APIKey: testKey, Model: "m", MaxRetries: -1})
	_, err := m.Generate(context.Background(), userReq("hi"))
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Errorf("transport error leaks the key: %v", err)
	}
}

func TestChatSendsHeaders(t *testing.T) {
	srv, m := chatTestServer(t, Config{
		Organization: "org-1", Project: "proj-1",
		Headers: http.Header{"X-Custom": {"yes"}},
	}, runlettest.OpenAIChatReply{Text: "ok"})
	srv.RequireAPIKey(testKey)
	if _, err := m.Generate(context.Background(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	for k, v := range map[string]string{"Authorization": "Bearer " + testKey, "Openai-Organization": "org-1",
		"Openai-Project": "proj-1", "X-Custom": "yes", "Content-Type": "application/json"} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if r.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		t.Errorf("%s %s", r.Method, r.Path)
	}
	// A wrong key is a 401 that is not retried.
	srv2, m2 := chatTestServer(t, Config{APIKey: "sk-wrong-key-abcdefgh", MaxRetries: 2}, runlettest.OpenAIChatReply{Text: "ok"})
	srv2.RequireAPIKey(testKey)
	_, err := m2.Generate(context.Background(), userReq("hi"))
	if pe := asProviderError(t, err); pe.StatusCode != 401 || pe.Code != "invalid_api_key" || len(srv2.Requests()) != 1 {
		t.Errorf("%+v", pe)
	}
}

// A local server needs no key: no Authorization header is sent.
func TestChatNoKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OLLAMA_API_KEY", "")
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "ok"})
	defer srv.Close()
	cfg := Ollama.Config("qwen3")
	cfg.BaseURL, cfg.HTTPClient = srv.BaseURL(), validating(t, srv.Client())
	m := NewChatCompletions(cfg)
	if _, err := m.Generate(context.Background(), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q", h)
	}
}

// Concurrent use of one adapter is safe (run with -race).
func TestChatConcurrent(t *testing.T) {
	srv, m := chatTestServer(t, Config{})
	srv.SetResponder(func(r runlettest.WireRequest) runlettest.OpenAIChatReply {
		return runlettest.OpenAIChatReply{Text: "hello there", ToolCalls: []runlettest.OpenAIChatToolCall{{Name: "f", Arguments: `{"a":1}`}}}
	})
	done := make(chan error)
	for i := range 8 {
		go func() {
			_, err := call(m, context.Background(), i%2 == 0)
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
