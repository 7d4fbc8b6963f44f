package httpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

const leakKey = "sk-proj-Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9bN2mQ4wE6rT8y"

// noFragment fails if any 8 consecutive characters of the key occur in s.
func noFragment(t *testing.T, where, s string) {
	t.Helper()
	for i := 0; i+8 <= len(leakKey); i++ {
		if strings.Contains(s, leakKey[i:i+8]) {
			t.Errorf("%s keeps %q of the key: %q", where, leakKey[i:i+8], s)
			return
		}
	}
}

func checkRedacted(t *testing.T, where string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", where)
	}
	noFragment(t, where+" Error()", err.Error())
	noFragment(t, where+" %+v", fmt.Sprintf("%+v %#v", err, err))
	var pe *runlet.ProviderError
	if errors.As(err, &pe) {
		noFragment(t, where+" fields", strings.Join([]string{pe.Provider, pe.Message, pe.Code, pe.Type, pe.RequestID}, "|"))
		if pe.Err != nil {
			noFragment(t, where+" cause", pe.Err.Error())
		}
	}
}

// A key echoed back by a server leaves no 8 characters of itself in any
// field of the error, even where the body is cut (at the message limit, in
// the middle of the key) or where the key sits in a header.
func TestRedactLeavesNoFragment(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-"+leakKey)
		switch r.URL.Query().Get("mode") {
		case "html": // the key straddles the point where the message is cut
			w.WriteHeader(502)
			io.WriteString(w, "<html><body>"+strings.Repeat("x", maxMessage-20)+" "+leakKey+"</body></html>")
		case "json":
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+leakKey[:20]+`****`+`","type":"`+leakKey+`","code":"`+leakKey[10:]+`"}}`)
		case "long": // the key is cut at the 64 KiB read limit
			w.WriteHeader(500)
			io.WriteString(w, strings.Repeat("y", maxErrorBody-30)+leakKey)
		}
	}))
	defer srv.Close()
	c := fastClient(-1)
	c.Header.Set("Authorization", "Bearer "+leakKey)
	for _, mode := range []string{"html", "json", "long"} {
		_, err := c.Generate(context.Background(), Call{URL: srv.URL + "?mode=" + mode}, nil)
		checkRedacted(t, mode, err)
	}
	// A cause whose text holds part of the key keeps its sentinels.
	err := c.Redact(&runlet.ProviderError{Provider: "p", Message: leakKey[5:30], RequestID: leakKey,
		Err: fmt.Errorf("%w: read https://proxy/?key=%s: %w", runlet.ErrStreamIncomplete, leakKey[3:], context.DeadlineExceeded)})
	checkRedacted(t, "cause", err)
	if !errors.Is(err, runlet.ErrStreamIncomplete) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("sentinels lost: %v", err)
	}
	// Errors without the key pass unchanged; short secrets are whole-word only.
	plain := errors.New("x")
	if c.Redact(plain) != plain || c.Redact(nil) != nil {
		t.Error("changed an error without a key")
	}
	if got := Redact(errors.New("key abcd5 here"), "abcd5").Error(); got != "key "+Mask+" here" {
		t.Errorf("short secret: %q", got)
	}
}

func TestShorten(t *testing.T) {
	if got := shorten(strings.Repeat("é", 300), 501); len(got) > 501+len("…") || !strings.HasSuffix(got, "é…") {
		t.Errorf("%q", got)
	}
	if shorten("abc", 3) != "abc" {
		t.Error("shortened a short string")
	}
}

// Credentials in the URL itself (user info, Gemini's ?key=) leave no trace
// in an error: not when a server echoes the request line or its
// Authorization header (the Basic credentials net/http builds from the
// user info), in any verb, streamed or not, nor when the URL does not even
// parse and the request is never sent.
func TestURLCredentialsRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":{"message":"bad request %s (auth %s)"}}`, r.URL.RequestURI(), r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	withUser := strings.Replace(srv.URL, "http://", "http://user:"+leakKey+"@", 1)
	tokenOnly := strings.Replace(srv.URL, "http://", "http://"+leakKey+"@", 1)
	for name, u := range map[string]string{
		"query":          srv.URL + "/v1/models/m:generateContent?alt=sse&key=" + leakKey,
		"escaped query":  srv.URL + "/v1?api_key=" + url.QueryEscape(leakKey+"/+="),
		"user info":      withUser + "/v1",
		"token user":     tokenOnly + "/v1",
		"bad port":       "https://user:" + leakKey + "@api.example.com:port/v1",
		"control char":   "https://user:" + leakKey + "@api.example.com/v1\x7f",
		"bad port token": "https://" + leakKey + "@api.example.com:x/v1?key=" + leakKey,
	} {
		c := fastClient(-1)
		_, err := c.Generate(context.Background(), Call{URL: u}, nil)
		checkRedacted(t, name, err)
		var serr error
		c.Stream(context.Background(), Call{URL: u}, func(_ runlet.StreamEvent, err error) bool { serr = err; return true }, nil)
		checkRedacted(t, name+" (stream)", serr)
	}
}
