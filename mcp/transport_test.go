package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testKey    = "mcp-KEY-0123456789abcdef"
	testSecret = "mcp-SECRET-header-42"
)

// recordingServer records the requests it gets and answers 400.
type recordingServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newRecordingServer(t *testing.T) *recordingServer {
	r := &recordingServer{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Clone(context.Background()))
		r.mu.Unlock()
		http.Error(w, "nope", http.StatusBadRequest)
	}))
	t.Cleanup(r.Close)
	return r
}

// leaked fails t when a request r got carries a credential.
func (r *recordingServer) leaked(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) == 0 {
		t.Fatal("the other origin was never asked")
	}
	for _, req := range r.seen {
		for k, vs := range req.Header {
			if v := strings.Join(vs, ","); strings.Contains(v, testKey) || strings.Contains(v, testSecret) {
				t.Errorf("header %s reached another origin", k)
			}
		}
		if strings.Contains(req.URL.String(), testKey) {
			t.Errorf("the URL's key reached another origin: %s", req.URL)
		}
	}
}

func connectCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var credentials = map[string]string{"Authorization": "Bearer " + testKey, "X-Custom-Auth": testSecret}

// TestHTTPRedirectDropsCredentials: a server that redirects to another
// port or host gets none of the configured headers, nor a key in the
// URL's query, sent along, over Streamable HTTP and HTTP+SSE. (The
// headers were added to every request before, wherever it went.)
func TestHTTPRedirectDropsCredentials(t *testing.T) {
	for _, sse := range []bool{false, true} {
		for _, host := range []string{"port", "host"} {
			t.Run(fmt.Sprintf("sse=%v/%s", sse, host), func(t *testing.T) {
				dst := newRecordingServer(t)
				target := dst.URL
				if host == "host" {
					u, _ := url.Parse(dst.URL)
					target = "http://localhost:" + u.Port()
				}
				src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusTemporaryRedirect)
				}))
				defer src.Close()
				_, err := Connect(connectCtx(t), ServerConfig{URL: src.URL + "/mcp?key=" + testKey, Headers: credentials, SSE: sse}, WithRetry(1, 0))
				if err == nil {
					t.Fatal("Connect succeeded against a server that answers 400")
				}
				dst.leaked(t)
			})
		}
	}
}

// TestSSEEndpointElsewhereGetsNoCredentials: an HTTP+SSE server whose
// endpoint event names another origin gets the messages posted there
// without the configured headers.
func TestSSEEndpointElsewhereGetsNoCredentials(t *testing.T) {
	dst := newRecordingServer(t)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/messages\n\n", dst.URL)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}))
	defer src.Close()
	defer src.CloseClientConnections()
	_, err := Connect(connectCtx(t), ServerConfig{URL: src.URL + "/sse", Headers: credentials, SSE: true}, WithRetry(1, 0))
	if err == nil {
		t.Fatal("Connect succeeded against a message endpoint that answers 400")
	}
	dst.leaked(t)
}

// countingTransport counts the requests it is asked to send and fails
// them.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, errors.New("no network in tests")
}

// TestPlainHTTPRefusesCredentials: Connect refuses to send headers or a
// URL's credentials over plain http:// off loopback, naming the opt-out,
// and sends nothing; the opt-out, no credentials, https and loopback go
// ahead.
func TestPlainHTTPRefusesCredentials(t *testing.T) {
	cases := []struct {
		name     string
		url      string
		headers  map[string]string
		insecure bool
		refused  bool
	}{
		{"headers", "http://mcp.example.com/mcp", credentials, false, true},
		{"userinfo", "http://u:" + testSecret + "@mcp.example.com/mcp", nil, false, true},
		{"query token", "http://mcp.example.com/mcp?access_token=" + testKey, nil, false, true},
		{"opted out", "http://mcp.example.com/mcp", credentials, true, false},
		{"no credentials", "http://mcp.example.com/mcp", nil, false, false},
		{"https", "https://mcp.example.com/mcp", credentials, false, false},
		{"loopback", "http://127.0.0.1:1/mcp", credentials, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := &countingTransport{}
			cfg := ServerConfig{URL: c.url, Headers: c.headers, AllowInsecureHTTP: c.insecure, HTTPClient: &http.Client{Transport: tr}}
			_, err := Connect(connectCtx(t), cfg, WithRetry(1, 0))
			if err == nil {
				t.Fatal("Connect succeeded without a server")
			}
			if !c.refused {
				if tr.n.Load() == 0 {
					t.Fatalf("Connect sent nothing: %v", err)
				}
				return
			}
			if tr.n.Load() != 0 {
				t.Fatal("a credential went over plain HTTP")
			}
			for _, want := range []string{"AllowInsecureHTTP", "allow_insecure_http"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the opt-out %s", err, want)
				}
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), testSecret) {
				t.Errorf("error %q holds the credential", err)
			}
		})
	}
}
