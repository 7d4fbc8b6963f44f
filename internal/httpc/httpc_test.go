package httpc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fastClient(retries int) *Client {
	return &Client{Provider: "test", MaxRetries: retries, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		Header: http.Header{"Authorization": {"Bearer sk-secret"}}}
}

func TestPostRetriesThenSucceeds(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-secret" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", r.Header)
		}
		body, _ := io.ReadAll(r.Body)
		if string(body) != `{"x":1}` {
			t.Errorf("attempt %d body %q", n.Load(), body)
		}
		switch n.Add(1) {
		case 1:
			w.WriteHeader(503)
		case 2:
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	resp, err := fastClient(2).Post(context.Background(), srv.URL, []byte(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if n.Load() != 3 {
		t.Fatalf("%d attempts", n.Load())
	}
}

func TestPostErrorMapping(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		header    http.Header
		body      string
		want      runlet.ProviderError
		retryable bool
	}{
		{"openai envelope", 400, nil, `{"error":{"message":"bad role","type":"invalid_request_error","param":"messages","code":"unsupported_value"}}`,
			runlet.ProviderError{StatusCode: 400, Type: "invalid_request_error", Code: "unsupported_value", Message: "bad role"}, false},
		{"anthropic envelope", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			runlet.ProviderError{StatusCode: 529, Type: "overloaded_error", Message: "Overloaded"}, true},
		{"numeric code", 404, http.Header{"X-Request-Id": {"req_1"}}, `{"error":{"message":"no such model","code":404}}`,
			runlet.ProviderError{StatusCode: 404, Message: "no such model", RequestID: "req_1"}, false}, // "HTTP 404 no such model", not "HTTP 404 (404) ..."
		{"html from a proxy", 502, nil, "<html><head><title>502 Bad Gateway</title></head>\n<body><h1>Bad Gateway</h1></body></html>",
			runlet.ProviderError{StatusCode: 502, Message: "502 Bad Gateway Bad Gateway"}, true},
		{"empty body", 500, nil, "", runlet.ProviderError{StatusCode: 500, Message: "Internal Server Error"}, true},
		{"insufficient quota is final", 429, nil, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			runlet.ProviderError{StatusCode: 429, Type: "insufficient_quota", Code: "insufficient_quota", Message: "You exceeded your current quota"}, false},
		{"string error", 401, nil, `{"error":"invalid key"}`, runlet.ProviderError{StatusCode: 401, Message: "invalid key"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header()[k] = v
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			_, err := fastClient(-1).Post(context.Background(), srv.URL, nil)
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v", err)
			}
			if pe.StatusCode != tc.want.StatusCode || pe.Type != tc.want.Type || pe.Code != tc.want.Code ||
				pe.Message != tc.want.Message || pe.RequestID != tc.want.RequestID || pe.Retryable != tc.retryable || pe.Provider != "test" {
				t.Fatalf("got %+v", pe)
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Fatal("key in error")
			}
		})
	}
}

func TestPostGivesUpAfterMaxRetries(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(500)
	}))
	defer srv.Close()
	_, err := fastClient(2).Post(context.Background(), srv.URL, nil)
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 500 || n.Load() != 3 {
		t.Fatalf("err=%v attempts=%d", err, n.Load())
	}
	n.Store(0)
	_, _ = fastClient(-1).Post(context.Background(), srv.URL, nil)
	if n.Load() != 1 {
		t.Fatalf("negative MaxRetries made %d attempts", n.Load())
	}
}

func TestPostNoRetryOnClientError(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(400)
	}))
	defer srv.Close()
	if _, err := fastClient(3).Post(context.Background(), srv.URL, nil); err == nil || n.Load() != 1 {
		t.Fatalf("err=%v attempts=%d", err, n.Load())
	}
}

func TestPostConnectionErrorRetriedAndScrubbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close() // nothing listens any more
	_, err := fastClient(1).Post(context.Background(), "http://user:pw@"+strings.TrimPrefix(url, "http://")+"/v1?key=sk-secret", nil)
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || !pe.Retryable || pe.StatusCode != 0 {
		t.Fatalf("err = %v", err)
	}
	if s := err.Error(); strings.Contains(s, "sk-secret") || strings.Contains(s, "pw@") {
		t.Fatalf("credential in error: %s", s)
	}
}

// A Retry-After longer than the context's deadline or MaxRetryWait allows
// returns the server's error, with its RetryAfter, at once: never a retry
// sooner than asked, never a bare deadline error.
func TestRetryAfterBeyondWhatWeMayWait(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", r.URL.Query().Get("after"))
		status, _ := strconv.Atoi(r.URL.Query().Get("status"))
		w.WriteHeader(status)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		status, after string
		deadline      time.Duration // 0: none
		maxWait       time.Duration
		want          time.Duration
	}{
		{"503", "30", 50 * time.Millisecond, 0, 30 * time.Second},
		{"429", "30", 10 * time.Second, 0, 30 * time.Second},
		{"429", "120", 0, 0, 120 * time.Second},         // past DefaultMaxRetryWait
		{"503", "25", 0, time.Second, 25 * time.Second}, // past maxWait; longer than the 20 s bound below
	} {
		n.Store(0)
		ctx := context.Background()
		if tc.deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, tc.deadline)
			defer cancel()
		}
		c := fastClient(5)
		c.MaxRetryWait = tc.maxWait
		start := time.Now()
		_, err := c.Post(ctx, srv.URL+"?status="+tc.status+"&after="+tc.after, nil)
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || strconv.Itoa(pe.StatusCode) != tc.status || pe.RetryAfter != tc.want || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%+v: err = %v", tc, err)
		}
		if n.Load() != 1 || time.Since(start) > 20*time.Second { // no wait: one request, and well under Retry-After
			t.Fatalf("%+v: %d requests, %v", tc, n.Load(), time.Since(start))
		}
	}
}

// Cancelling the context ends a wait for Retry-After.
func TestPostContextCancelsBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(503)
		cancel()
	}))
	defer srv.Close()
	start := time.Now()
	_, err := fastClient(5).Post(ctx, srv.URL, nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 20*time.Second { // not the 30 s Retry-After
		t.Fatalf("err=%v after %v", err, time.Since(start))
	}
}

func TestRetryAfter(t *testing.T) {
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"10"}, "Retry-After": {"9"}}, 10 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	}
	for _, c := range cases {
		if got := RetryAfter(c.h); got != c.want {
			t.Errorf("%v: got %v, want %v", c.h, got, c.want)
		}
	}
	// An hour ahead (the date has whole seconds): however long the
	// machine takes between formatting and reading it.
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	if got := RetryAfter(http.Header{"Retry-After": {future}}); got <= 50*time.Minute || got > time.Hour {
		t.Errorf("HTTP date: %v", got)
	}
}

func TestBackoffBounds(t *testing.T) {
	c := &Client{}
	for attempt := range 40 {
		d := c.backoff(attempt)
		lo := min(defaultMinBackoff<<min(attempt, 16), defaultMaxBackoff) / 2
		if d < lo || d > defaultMaxBackoff {
			t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, lo, defaultMaxBackoff)
		}
	}
	ctx := context.Background()
	if d, ok := c.wait(ctx, 0, 3*time.Second); d != 3*time.Second || !ok {
		t.Fatalf("Retry-After not honoured: %v", d)
	}
	// A wait past MaxRetryWait is refused, not shortened.
	if d, ok := c.wait(ctx, 0, time.Hour); ok {
		t.Fatalf("Retry-After of an hour shortened to %v", d)
	}
}

type permanent struct{}

func (permanent) Error() string   { return "will never work" }
func (permanent) Retryable() bool { return false }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTransportErrorThatIsNotRetryable(t *testing.T) {
	var n atomic.Int32
	c := fastClient(3)
	c.HTTP = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		n.Add(1)
		return nil, permanent{}
	})}
	_, err := c.Post(context.Background(), "http://127.0.0.1:1/x", nil)
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.Retryable || n.Load() != 1 {
		t.Fatalf("err=%v attempts=%d", err, n.Load())
	}
	// A transport that classifies its own error (a replayer whose recording
	// has ended, say) is not the network failing: its error is reported as
	// it is, without "connection failed" and the URL.
	if got := err.Error(); got != "test: will never work" {
		t.Errorf("err = %q, want %q", got, "test: will never work")
	}
}

func TestReadBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		io.WriteString(w, strings.Repeat("x", 100))
	}))
	defer srv.Close()
	for _, path := range []string{"/sized", "/chunked"} {
		for _, tc := range []struct {
			limit int64
			err   error
		}{{100, nil}, {1000, nil}, {99, ErrBodyTooLarge}} {
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, err := ReadBody(resp, tc.limit)
			resp.Body.Close()
			if !errors.Is(err, tc.err) || (err == nil && len(body) != 100) {
				t.Errorf("%s limit %d: %d bytes, err %v", path, tc.limit, len(body), err)
			}
		}
	}
}

// A body of unknown length is read through a pooled buffer: what ReadBody
// returns is the caller's own, not overwritten by the next read.
func TestReadBodyOwnsItsBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length
		io.WriteString(w, strings.Repeat(r.URL.Query().Get("c"), 5000))
	}))
	defer srv.Close()
	var bodies [][]byte
	for _, c := range []string{"a", "b", "c"} {
		resp, err := http.Get(srv.URL + "?c=" + c)
		if err != nil {
			t.Fatal(err)
		}
		body, err := ReadBody(resp, 1<<20)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	for i, c := range []string{"a", "b", "c"} {
		if string(bodies[i]) != strings.Repeat(c, 5000) {
			t.Errorf("body %d changed: %.20q...", i, bodies[i])
		}
	}
}

func TestRetryStream(t *testing.T) {
	perr := &runlet.ProviderError{Message: "cut", Retryable: true}
	ev := runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "x"}
	cases := []struct {
		name     string
		attempts []func(emit func(runlet.StreamEvent) bool) error
		stopAt   int // the caller stops after this many events (0: never)
		calls    int
		events   int
		err      bool
	}{
		{"fails before any event: retried", []func(func(runlet.StreamEvent) bool) error{
			func(func(runlet.StreamEvent) bool) error { return perr },
			func(emit func(runlet.StreamEvent) bool) error { emit(ev); return nil },
		}, 0, 2, 1, false},
		{"fails after an event: final", []func(func(runlet.StreamEvent) bool) error{
			func(emit func(runlet.StreamEvent) bool) error { emit(ev); return perr },
			func(emit func(runlet.StreamEvent) bool) error { emit(ev); return nil },
		}, 0, 1, 1, true},
		{"caller stops: no error", []func(func(runlet.StreamEvent) bool) error{
			func(emit func(runlet.StreamEvent) bool) error {
				for emit(ev) {
				}
				return perr
			},
		}, 2, 1, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls, events := 0, 0
			yield := func(runlet.StreamEvent, error) bool {
				events++
				return tc.stopAt == 0 || events < tc.stopAt
			}
			err := fastClient(3).RetryStream(context.Background(), yield, func(emit func(runlet.StreamEvent) bool) error {
				calls++
				return tc.attempts[calls-1](emit)
			})
			if calls != tc.calls || events != tc.events || (err != nil) != tc.err {
				t.Fatalf("calls %d events %d err %v", calls, events, err)
			}
		})
	}
}

func TestGoogleStatusEnvelope(t *testing.T) {
	// google.rpc.Status as the Gemini API sends it (vercel/ai fixture
	// google-429-retry-info.json), bare and wrapped in an array.
	body := `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan.","status":"RESOURCE_EXHAUSTED",
	"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"X"}]},
	{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"34.4s"}]}}`
	for _, b := range []string{body, "[" + body + "]"} {
		e := ErrorFromBody("gemini", []byte(b))
		if e.Code != "RESOURCE_EXHAUSTED" || !e.Retryable || e.RetryAfter != 34400*time.Millisecond || !strings.HasPrefix(e.Message, "You exceeded") {
			t.Errorf("%+v", e)
		}
	}
	e := ErrorFromBody("gemini", []byte(`[{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}]`))
	if e.Code != "INVALID_ARGUMENT" || e.Retryable || e.RetryAfter != 0 || e.Message != "bad" {
		t.Errorf("%+v", e)
	}
	if e := ErrorFromBody("gemini", []byte(`[]`)); e.Message != "[]" {
		t.Errorf("%+v", e)
	}
	// An HTTP Retry-After wins over the body's delay; without one the body's stays.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/h" {
			w.Header().Set("Retry-After", "2")
		}
		w.WriteHeader(429)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	for path, want := range map[string]time.Duration{"/h": 2 * time.Second, "/b": 34400 * time.Millisecond} {
		_, err := fastClient(-1).Post(context.Background(), srv.URL+path, []byte("{}"))
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || pe.RetryAfter != want || pe.StatusCode != 429 {
			t.Errorf("%s: %v %+v", path, err, pe)
		}
	}
}
