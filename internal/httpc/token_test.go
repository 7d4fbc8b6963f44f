package httpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
)

// expiring is a token source whose token expires after every use, as a
// short-lived access token does: each call refreshes it.
type expiring struct{ n atomic.Int32 }

func (e *expiring) token(context.Context) (string, error) {
	return fmt.Sprintf("ya29.token-%d-0123456789abcdef", e.n.Add(1)), nil
}

// TestTokenRefreshedEachAttempt: every attempt asks the token source, so
// the server sees the refreshed token, never a stale one or the fixed
// Authorization of Header.
func TestTokenRefreshedEachAttempt(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Values("Authorization")...)
		n := len(seen)
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	src := &expiring{}
	c := fastClient(2).WithToken(src.token)
	for range 2 {
		resp, err := c.Post(context.Background(), srv.URL, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := []string{"Bearer ya29.token-1-0123456789abcdef", "Bearer ya29.token-2-0123456789abcdef", "Bearer ya29.token-3-0123456789abcdef"}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("server saw %q, want %q", seen, want)
	}
}

// TestTokenNeverInErrors: a server that echoes the request's token in its
// error body gets it masked, as a key is, in every mode.
func TestTokenNeverInErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"token %s expired","status":"UNAUTHENTICATED"}}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	src := &expiring{}
	c := fastClient(0).WithToken(src.token)
	_, err := c.Generate(context.Background(), Call{URL: srv.URL, Body: []byte(`{}`)}, func(*http.Response) (*runlet.ModelResponse, error) {
		return nil, errors.New("unreachable")
	})
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusUnauthorized {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "0123456789abcdef") || strings.Contains(pe.Message, "token-1") {
		t.Fatalf("token in error: %v", err)
	}
}

// TestTokenSourceFails: a token source's failure is a final
// *runlet.ProviderError that wraps it and says what failed; nothing is
// sent, and a cancelled context is the context's error.
func TestTokenSourceFails(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	cause := errors.New("no Application Default Credentials: tried $GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, the metadata server")
	c := fastClient(2).WithToken(func(context.Context) (string, error) { return "", cause })
	_, err := c.Post(context.Background(), srv.URL, []byte(`{}`))
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || pe.Retryable || !errors.Is(err, cause) || !strings.Contains(pe.Message, "getting an access token") ||
		!strings.Contains(err.Error(), "metadata server") {
		t.Fatalf("err = %#v", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests sent without a token", hits.Load())
	}

	empty := fastClient(0).WithToken(func(context.Context) (string, error) { return "", nil })
	if _, err := empty.Post(context.Background(), srv.URL, nil); !errors.Is(err, runlet.ErrInvalidRequest) {
		t.Fatalf("empty token: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := fastClient(0).WithToken(func(ctx context.Context) (string, error) { return "", fmt.Errorf("refresh: %w", ctx.Err()) })
	if _, err := slow.Post(ctx, srv.URL, nil); err != context.Canceled {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestTokenPolicy: a token is a credential: never sent over plain HTTP
// off loopback, and dropped on a redirect to another origin.
func TestTokenPolicy(t *testing.T) {
	src := &expiring{}
	c := (&Client{Provider: "test"}).WithToken(src.token)
	_, err := c.Post(context.Background(), "http://example.invalid/v1", nil)
	if !errors.Is(err, runlet.ErrInvalidRequest) || !strings.Contains(err.Error(), "plain HTTP") {
		t.Fatalf("plain HTTP: %v", err)
	}

	var leaked atomic.Value
	dst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		io.WriteString(w, "ok")
	}))
	defer dst.Close()
	// Another port of the same host is another origin.
	src2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, dst.URL+"/moved", http.StatusTemporaryRedirect)
	}))
	defer src2.Close()
	resp, err := c.Post(context.Background(), src2.URL, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v, _ := leaked.Load().(string); v != "" {
		t.Fatalf("redirect carried Authorization %q", v)
	}
}
