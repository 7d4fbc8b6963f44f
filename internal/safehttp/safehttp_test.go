package safehttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true, "::ffff:127.0.0.1": true,
		"10.0.0.1": false, "example.com": false, "localhost.example.com": false, "": false, "::": false, "0.0.0.0": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestOrigin(t *testing.T) {
	same := [][2]string{
		{"https://api.example.com/v1", "https://API.example.com:443/other"},
		{"http://127.0.0.1/a", "http://127.0.0.1:80/b?x=1"},
	}
	differ := [][2]string{
		{"https://api.example.com/v1", "http://api.example.com/v1"},       // scheme
		{"https://api.example.com/v1", "https://api.example.com:8443/v1"}, // port
		{"https://api.example.com/v1", "https://evil.api.example.com/v1"}, // subdomain
		{"https://api.example.com/v1", "https://example.com/v1"},          // parent
	}
	o := func(s string) Origin {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return OriginOf(u)
	}
	for _, p := range same {
		if o(p[0]) != o(p[1]) {
			t.Errorf("%s and %s: want the same origin", p[0], p[1])
		}
	}
	for _, p := range differ {
		if o(p[0]) == o(p[1]) {
			t.Errorf("%s and %s: want different origins", p[0], p[1])
		}
	}
}

// TestClientLeavesUserClient: Client copies the user's *http.Client,
// never changes it, and still asks its CheckRedirect (here: refusing every
// redirect) after the policy's own rules.
func TestClientLeavesUserClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/next", http.StatusFound)
	}))
	defer srv.Close()
	stop := errors.New("user policy: no redirects")
	asked := 0
	user := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { asked++; return stop }}
	before := *user
	p := &Policy{}
	c := p.Client(user)
	if c == user {
		t.Fatal("Client returned the user's client")
	}
	_, err := c.Get(srv.URL)
	if !errors.Is(err, stop) || asked != 1 {
		t.Fatalf("err = %v, asked %d times; want the user's CheckRedirect asked once", err, asked)
	}
	if user.Transport != before.Transport || user.Jar != before.Jar || user.Timeout != before.Timeout {
		t.Error("the user's client changed")
	}
	_, _ = user.Get(srv.URL) // the user's own CheckRedirect is still there, unwrapped
	if asked != 2 {
		t.Errorf("user's CheckRedirect asked %d times, want 2", asked)
	}
}

// TestDefaultRedirectLimit: without a CheckRedirect of the user's, the
// 10-redirect limit of net/http still holds.
func TestDefaultRedirectLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	}))
	defer srv.Close()
	_, err := (&Policy{}).Client(nil).Get(srv.URL + "/")
	if err == nil || !strings.Contains(err.Error(), "10 redirects") {
		t.Fatalf("err = %v, want the 10-redirect limit", err)
	}
}

// TestStripQuery: a cross-origin redirect loses the query parameters
// named like a credential, and any holding a credential's value, keeping
// the others.
func TestStripQuery(t *testing.T) {
	first, _ := http.NewRequest("GET", "https://a.example/v1?key=AIzaSECRET123456&alt=sse", nil)
	first.Header.Set("X-Goog-Api-Key", "AIzaOTHERSECRET99")
	next, _ := http.NewRequest("GET", "https://b.example/v1?key=AIzaSECRET123456&alt=sse&k2=AIzaOTHERSECRET99&q=ok", nil)
	next.Header = first.Header.Clone()
	next.Header.Set("Referer", first.URL.String())
	p := &Policy{}
	if err := p.checkRedirect(nil)(next, []*http.Request{first}); err != nil {
		t.Fatal(err)
	}
	if got := next.URL.RawQuery; got != "alt=sse&q=ok" {
		t.Errorf("query = %q, want alt=sse&q=ok", got)
	}
	if len(next.Header) != 0 {
		t.Errorf("headers left: %v", next.Header)
	}
}
