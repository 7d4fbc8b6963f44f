package vertex_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/vertex"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tokenServer is a fake Google OAuth token endpoint: it grants
// "ya29.fake-N" for the test's refresh token, lasting expiresIn seconds.
type tokenServer struct {
	*httptest.Server
	mu     sync.Mutex
	grants int
}

func newTokenServer(t *testing.T, expiresIn int) *tokenServer {
	ts := &tokenServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != "1//refresh-secret" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"Bad Request"}`)
			return
		}
		ts.mu.Lock()
		ts.grants++
		n := ts.grants
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"ya29.fake-%d","expires_in":%d,"token_type":"Bearer"}`, n, expiresIn)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// useADC points Application Default Credentials at an authorized-user
// file whose token endpoint is ts, and clears the project and location
// variables.
func useADC(t *testing.T, ts *tokenServer, project string) {
	f := filepath.Join(t.TempDir(), "adc.json")
	creds := map[string]string{"type": "authorized_user", "client_id": "cid", "client_secret": "csecret",
		"refresh_token": "1//refresh-secret", "token_uri": ts.URL, "project_id": project}
	b, _ := json.Marshal(creds)
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", f)
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "")
}

// vertexServer is a fake Vertex AI that records the path and token of
// each request and answers as Gemini or Claude would.
type vertexServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "path token"
}

func newVertexServer(t *testing.T) *vertexServer {
	vs := &vertexServer{}
	vs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		vs.mu.Lock()
		vs.seen = append(vs.seen, r.URL.Path+" "+tok)
		vs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/publishers/anthropic/") {
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
			return
		}
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	}))
	t.Cleanup(vs.Close)
	return vs
}

func (vs *vertexServer) requests() []string {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return append([]string(nil), vs.seen...)
}

func generate(t *testing.T, m runlet.Model) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.Generate(ctx, &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
}

// TestTokenRefreshed: with Application Default Credentials whose tokens
// expire at once, each request refreshes the token (the refresh token
// goes to the token endpoint) and Vertex AI sees the new one; with tokens
// that last, one token serves every request.
func TestTokenRefreshed(t *testing.T) {
	for _, c := range []struct {
		expiresIn int
		want      []string
	}{
		{1, []string{"ya29.fake-1", "ya29.fake-2", "ya29.fake-3"}}, // expired on arrival (within oauth2's 10 s margin)
		{3600, []string{"ya29.fake-1", "ya29.fake-1", "ya29.fake-1"}},
	} {
		ts := newTokenServer(t, c.expiresIn)
		useADC(t, ts, "adc-proj")
		vs := newVertexServer(t)
		m, err := vertex.Gemini(context.Background(), gemini.Config{BaseURL: vs.URL, Model: "gemini-2.5-flash",
			Vertex: &gemini.Vertex{Location: "us-central1"}})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			generate(t, m)
		}
		var got []string
		for _, r := range vs.requests() {
			path, tok, _ := strings.Cut(r, " ")
			if path != "/v1/projects/adc-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent" {
				t.Errorf("path %s", path)
			}
			got = append(got, tok)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("expires_in %d: Vertex saw %v, want %v", c.expiresIn, got, c.want)
		}
	}
}

// TestAnthropicDefaults: Claude on Vertex AI with the project from
// $GOOGLE_CLOUD_PROJECT (over the credentials' own) and the global
// location by default.
func TestAnthropicDefaults(t *testing.T) {
	ts := newTokenServer(t, 3600)
	useADC(t, ts, "adc-proj")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "env-proj")
	vs := newVertexServer(t)
	m, err := vertex.Anthropic(context.Background(), anthropic.Config{BaseURL: vs.URL, Model: "claude-sonnet-4-5@20250929"})
	if err != nil {
		t.Fatal(err)
	}
	generate(t, m)
	want := "/v1/projects/env-proj/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict ya29.fake-1"
	if got := vs.requests(); len(got) != 1 || got[0] != want {
		t.Fatalf("requests %q, want %q", got, want)
	}
}

// TestCredentialErrors: errors say which credential source was tried,
// and a refresh token never appears in one.
func TestCredentialErrors(t *testing.T) {
	t.Setenv("GOOGLE_CLOUD_PROJECT", "p")
	missing := filepath.Join(t.TempDir(), "nope.json")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", missing)
	_, err := vertex.Gemini(context.Background(), gemini.Config{Model: "gemini-2.5-flash"})
	if err == nil || !strings.Contains(err.Error(), "$GOOGLE_APPLICATION_CREDENTIALS ("+missing+")") {
		t.Fatalf("missing file: %v", err)
	}

	// A token endpoint that refuses the grant: the call fails, naming the
	// source, with no token or refresh token in the error.
	bad := newTokenServer(t, 3600)
	useADC(t, bad, "p")
	f := os.Getenv("GOOGLE_APPLICATION_CREDENTIALS")
	b, _ := os.ReadFile(f)
	os.WriteFile(f, []byte(strings.Replace(string(b), "1//refresh-secret", "1//revoked-secret", 1)), 0o600)
	vs := newVertexServer(t)
	m, err := vertex.Gemini(context.Background(), gemini.Config{BaseURL: vs.URL, Model: "gemini-2.5-flash", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
	var pe *runlet.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "access token from $GOOGLE_APPLICATION_CREDENTIALS") ||
		strings.Contains(err.Error(), "secret") || len(vs.requests()) != 0 {
		t.Fatalf("refused grant: %v (%d requests)", err, len(vs.requests()))
	}

	// No project anywhere.
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	useADC(t, newTokenServer(t, 3600), "")
	if _, err := vertex.Gemini(context.Background(), gemini.Config{Model: "m"}); err == nil || !strings.Contains(err.Error(), "GOOGLE_CLOUD_PROJECT") {
		t.Fatalf("no project: %v", err)
	}
}

func TestIsClaude(t *testing.T) {
	for model, want := range map[string]bool{
		"claude-sonnet-4-5@20250929": true, "publishers/anthropic/models/claude-haiku-4-5": true,
		"gemini-2.5-flash": false, "": false,
	} {
		if vertex.IsClaude(model) != want {
			t.Errorf("IsClaude(%q) != %v", model, want)
		}
	}
}
