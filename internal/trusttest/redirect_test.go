package trusttest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

const (
	key    = "sk-test-KEY-0123456789abcdef"
	secret = "user-SECRET-value-42"
)

// recorder is a server that records the requests it gets and answers 400.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Clone(req.Context()))
		r.mu.Unlock()
		http.Error(w, `{"error":{"message":"nope"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.seen...)
}

// leaks lists where req carries the key or the user's secret header.
func leaks(req *http.Request) []string {
	var out []string
	for k, vs := range req.Header {
		for _, v := range vs {
			if strings.Contains(v, key) || strings.Contains(v, secret) {
				out = append(out, "header "+k)
			}
		}
	}
	if strings.Contains(req.URL.String(), key) || strings.Contains(req.URL.String(), secret) {
		out = append(out, "URL")
	}
	return out
}

// redirector answers every request with a redirect (code) to target,
// keeping the path and query, as a moved API's server does.
func redirector(t *testing.T, code int, target func() string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target()+r.URL.RequestURI(), code)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestRedirectDropsCredentials: a redirect to another port (where
// net/http keeps every header) or another host (where it drops
// Authorization but keeps x-api-key and custom headers) carries neither
// the adapter's key nor the user's headers, for every adapter, status and
// mode.
func TestRedirectDropsCredentials(t *testing.T) {
	for _, a := range adapters {
		for _, m := range modes {
			for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
				for _, host := range []string{"port", "host"} {
					t.Run(a.name+"/"+m.name+"/"+http.StatusText(code)+"/"+host, func(t *testing.T) {
						dst := newRecorder(t)
						target := dst.URL
						if host == "host" {
							u, _ := url.Parse(dst.URL)
							target = "http://localhost:" + u.Port()
						}
						src := redirector(t, code, func() string { return target })
						model := a.new(conf{BaseURL: src.URL, APIKey: key, Headers: http.Header{"X-Custom-Auth": {secret}}})
						_ = m.call(guard(t), model)
						got := dst.requests()
						if len(got) == 0 {
							t.Fatal("the redirect was not followed")
						}
						for _, r := range got {
							if l := leaks(r); len(l) > 0 {
								t.Errorf("the other origin got the credentials in %v", l)
							}
						}
					})
				}
			}
		}
	}
}

// TestSameOriginRedirectKeepsCredentials: a redirect within the origin
// keeps working, key and headers included.
func TestSameOriginRedirectKeepsCredentials(t *testing.T) {
	for _, a := range adapters {
		for _, m := range modes {
			t.Run(a.name+"/"+m.name, func(t *testing.T) {
				var mu sync.Mutex
				var moved *http.Request
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !strings.HasPrefix(r.URL.Path, "/moved") {
						http.Redirect(w, r, "/moved"+r.URL.RequestURI(), http.StatusTemporaryRedirect)
						return
					}
					mu.Lock()
					moved = r.Clone(r.Context())
					mu.Unlock()
					http.Error(w, "nope", http.StatusBadRequest)
				}))
				defer srv.Close()
				_ = m.call(guard(t), a.new(conf{BaseURL: srv.URL, APIKey: key, Headers: http.Header{"X-Custom-Auth": {secret}}}))
				mu.Lock()
				defer mu.Unlock()
				if moved == nil {
					t.Fatal("the redirect was not followed")
				}
				if l := leaks(moved); len(l) != 2 {
					t.Errorf("the same origin got the credentials in %v; want the key header and X-Custom-Auth", l)
				}
			})
		}
	}
}
