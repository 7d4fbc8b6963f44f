package trusttest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
)

// remote stands for a host off the machine: its transport counts the
// requests that reached it (none travel) and answers 400.
type remote struct{ hits atomic.Int32 }

func (r *remote) RoundTrip(req *http.Request) (*http.Response, error) {
	r.hits.Add(1)
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// TestPlainHTTPRefusesCredentials: an adapter never sends its key, or the
// user's headers, over plain http:// to a host that is not loopback; the
// error names the opt-out, which lets it through. Without credentials, and
// on loopback, plain HTTP needs nothing.
func TestPlainHTTPRefusesCredentials(t *testing.T) {
	cases := []struct {
		name     string
		base     string
		key      string
		headers  http.Header
		insecure bool
		refused  bool
	}{
		{"key", "http://api.example.com/v1", key, nil, false, true},
		{"user header", "http://api.example.com/v1", "", http.Header{"X-Custom-Auth": {secret}}, false, true},
		{"key in userinfo", "http://u:" + secret + "@api.example.com/v1", "", nil, false, true},
		{"IP", "http://10.1.2.3:8000/v1", key, nil, false, true},
		{"opted out", "http://api.example.com/v1", key, nil, true, false},
		{"no credential", "http://gpu-box.lan:8000/v1", "", nil, false, false},
		{"https", "https://api.example.com/v1", key, nil, false, false},
		{"localhost", "http://localhost:11434/v1", key, nil, false, false},
		{"127.0.0.2", "http://127.0.0.2:8000/v1", key, nil, false, false},
		{"::1", "http://[::1]:8080/v1", key, nil, false, false},
	}
	for _, a := range adapters {
		for _, m := range modes {
			for _, c := range cases {
				t.Run(a.name+"/"+m.name+"/"+c.name, func(t *testing.T) {
					tr := &remote{}
					err := m.call(guard(t), a.new(conf{BaseURL: c.base, APIKey: c.key, Headers: c.headers, Insecure: c.insecure,
						HTTPClient: &http.Client{Transport: tr}}))
					if !c.refused {
						if tr.hits.Load() == 0 {
							t.Fatalf("the request was refused: %v", err)
						}
						return
					}
					if tr.hits.Load() != 0 {
						t.Fatal("the credential went over plain HTTP")
					}
					var pe *runlet.ProviderError
					if !errors.As(err, &pe) || !errors.Is(err, runlet.ErrInvalidRequest) || pe.Retryable {
						t.Fatalf("err = %v; want a final *runlet.ProviderError wrapping ErrInvalidRequest", err)
					}
					for _, want := range []string{"AllowInsecureHTTP", "allow_insecure_http"} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("error %q does not name the opt-out %s", err, want)
						}
					}
					if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), key) {
						t.Errorf("error %q holds the credential", err)
					}
				})
			}
		}
	}
}

// TestRedirectToPlainHTTPRefused: an https server that redirects to plain
// http:// off loopback gets its redirect refused, with the opt-out named;
// the other host is never asked.
func TestRedirectToPlainHTTPRefused(t *testing.T) {
	for _, a := range adapters {
		for _, m := range modes {
			t.Run(a.name+"/"+m.name, func(t *testing.T) {
				srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, "http://api.example.com"+r.URL.RequestURI(), http.StatusPermanentRedirect)
				}))
				defer srv.Close()
				far := &remote{}
				hc := &http.Client{Transport: split{near: srv.Client().Transport, far: far}}
				err := m.call(guard(t), a.new(conf{BaseURL: srv.URL, APIKey: key, HTTPClient: hc}))
				if far.hits.Load() != 0 {
					t.Fatal("the redirect to plain HTTP was followed")
				}
				if err == nil || !strings.Contains(err.Error(), "AllowInsecureHTTP") || !errors.Is(err, runlet.ErrInvalidRequest) {
					t.Fatalf("err = %v; want a refusal naming AllowInsecureHTTP", err)
				}
			})
		}
	}
}

// split sends loopback requests to near and the others to far.
type split struct{ near, far http.RoundTripper }

func (s split) RoundTrip(req *http.Request) (*http.Response, error) {
	if h := req.URL.Hostname(); h == "127.0.0.1" || h == "localhost" {
		return s.near.RoundTrip(req)
	}
	return s.far.RoundTrip(req)
}
