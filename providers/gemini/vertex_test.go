package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit/modeltest"
)

// vertexPath is what Vertex AI serves Gemini at.
var vertexPath = regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:]+):(generateContent|streamGenerateContent)$`)

// vertexCheck returns what is wrong with req for Vertex AI (the URL's
// shape, project and location, alt=sse exactly when streaming, a bearer
// token and no API key), and the model, method and token of a right one.
func vertexCheck(req *http.Request, project, location string) (model, method, token, wrong string) {
	m := vertexPath.FindStringSubmatch(req.URL.Path)
	switch {
	case m == nil || m[1] != project || m[2] != location:
		return "", "", "", "not a Vertex AI Gemini URL: " + req.URL.Path
	case (m[4] == "streamGenerateContent") != (req.URL.RawQuery == "alt=sse"):
		return "", "", "", "query " + req.URL.RawQuery
	}
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" || req.Header.Get("X-Goog-Api-Key") != "" || req.URL.Query().Has("key") {
		return "", "", "", "want a bearer token and no API key"
	}
	return m[3], m[4], tok, ""
}

// vertexShim stands in front of a fake Gemini API server as Vertex AI
// does: it answers a request Vertex would refuse with Vertex's error, and
// forwards a right one to the fake server's /v1beta path, the token as
// its key.
type vertexShim struct {
	next              http.RoundTripper
	project, location string
}

func (s vertexShim) RoundTrip(req *http.Request) (*http.Response, error) {
	model, method, tok, wrong := vertexCheck(req, s.project, s.location)
	if wrong != "" {
		if req.Body != nil {
			req.Body.Close()
		}
		body := fmt.Sprintf(`{"error":{"code":400,"message":%q,"status":"INVALID_ARGUMENT"}}`, wrong)
		return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	out := req.Clone(req.Context())
	out.URL.Path = "/v1beta/models/" + model + ":" + method
	out.Header.Del("Authorization")
	out.Header.Set("X-Goog-Api-Key", tok)
	return s.next.RoundTrip(out)
}

// TestVertexModelContract runs the Model conformance suite against Gemini
// on Vertex AI: a fake Gemini server behind what Vertex checks.
func TestVertexModelContract(t *testing.T) {
	modeltest.Run(t, modeltest.GeminiWire, func(t *testing.T, s modeltest.Server) runlet.Model {
		next := s.HTTPClient.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		key := s.APIKey
		// The fake server's root, without the Gemini API's /v1beta.
		root := strings.TrimSuffix(s.BaseURL, "/v1beta")
		return New(Config{BaseURL: root, Vertex: &Vertex{Project: "test-proj", Location: "us-central1"},
			Token:            func(context.Context) (string, error) { return key, nil },
			HTTPClient:       &http.Client{Transport: vertexShim{next: next, project: "test-proj", location: "us-central1"}},
			MaxResponseBytes: s.MaxResponseBytes, MaxRetries: -1, Model: "gemini-test"})
	})
}

// urlRecorder answers every request with a canned response and keeps the
// URLs it was asked for.
type urlRecorder struct{ urls []string }

func (r *urlRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.urls = append(r.urls, req.URL.String())
	req.Body.Close()
	body := `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// TestVertexURLs: Gemini on Vertex AI is reached at the location's own
// endpoint, or the global one for "global", and no Gemini API key from
// the environment goes there.
func TestVertexURLs(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "AIza-never-to-vertex")
	for _, c := range []struct{ location, generate, stream string }{
		{"us-central1",
			"https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
			"https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"global",
			"https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-flash:generateContent",
			"https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
	} {
		rt := &urlRecorder{}
		m := New(Config{Vertex: &Vertex{Project: "my-proj", Location: c.location}, Model: "gemini-2.5-flash",
			Token: func(context.Context) (string, error) { return "ya29.tok", nil }, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1})
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
		if _, err := m.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		for _, err := range m.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(rt.urls) != 2 || rt.urls[0] != c.generate || rt.urls[1] != c.stream {
			t.Errorf("URLs %q, want %q and %q", rt.urls, c.generate, c.stream)
		}
	}
	rt := &urlRecorder{}
	m := New(Config{Vertex: &Vertex{Project: "p"}, Model: "gemini-2.5-flash", HTTPClient: &http.Client{Transport: rt}})
	if _, err := m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}); !errors.Is(err, runlet.ErrInvalidRequest) ||
		!strings.Contains(err.Error(), "location") || len(rt.urls) != 0 {
		t.Errorf("no location: %v, sent %d", err, len(rt.urls))
	}
}

// TestVertexRecorded decodes a response recorded from Vertex AI
// (testdata/SOURCES.md), served by a fake Vertex endpoint that checks the
// request's URL, token and contents as recorded.
func TestVertexRecorded(t *testing.T) {
	resp, err := os.ReadFile("testdata/pydantic-vertex-nonstream-text.response.json")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile("testdata/pydantic-vertex-nonstream-text.request.json")
	if err != nil {
		t.Fatal(err)
	}
	const project, location = "gen-lang-client-0498264908", "us-central1"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if model, _, _, wrong := vertexCheck(r, project, location); wrong != "" || model != "gemini-2.0-flash" {
			t.Errorf("request: %s (model %q)", wrong, model)
		}
		var got, want struct{ Contents json.RawMessage }
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &got) != nil || json.Unmarshal(recorded, &want) != nil || !sameJSON(got.Contents, want.Contents) {
			t.Errorf("contents %s, recorded %s", got.Contents, want.Contents)
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(resp)
	}))
	defer srv.Close()
	m := New(Config{BaseURL: srv.URL, Vertex: &Vertex{Project: project, Location: location}, Model: "gemini-2.0-flash",
		Token: func(context.Context) (string, error) { return "ya29.recorded", nil }})
	out, err := m.Generate(context.Background(), &runlet.ModelRequest{Instructions: "You are a helpful chatbot.",
		Messages: []runlet.Message{runlet.UserText("What is the capital of France?")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Message.Text() != "The capital of France is Paris.\n" || out.FinishReason != runlet.FinishStop ||
		out.Usage.InputTokens != 13 || out.Usage.OutputTokens != 8 || out.Usage.TotalTokens != 21 || out.Model != "gemini-2.0-flash" {
		t.Fatalf("decoded %+v", out)
	}
}

// sameJSON compares two JSON documents semantically, for handlers (which
// cannot call t.Fatal).
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}
