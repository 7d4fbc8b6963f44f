package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit/modeltest"
)

// vertexPath is what Vertex AI serves Claude at.
var vertexPath = regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):(rawPredict|streamRawPredict)$`)

// vertexShim stands in front of a fake Messages server as Vertex AI
// does: it checks what Vertex checks (the URL's shape, project and
// location, a bearer token, anthropic_version in the body and no model
// there, :streamRawPredict exactly when streaming), answering 400 or 401
// as Vertex would when one is wrong, and forwards a right one to the
// fake server as a Messages request (the model back in the body, the
// token as its key).
type vertexShim struct {
	next              http.RoundTripper
	project, location string
}

func (s vertexShim) RoundTrip(req *http.Request) (*http.Response, error) {
	fail := func(code int, msg string) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		body := fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":"INVALID_ARGUMENT"}}`, code, msg)
		return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	m := vertexPath.FindStringSubmatch(req.URL.Path)
	if m == nil || m[1] != s.project || m[2] != s.location || req.URL.RawQuery != "" {
		return fail(http.StatusNotFound, "not a Vertex AI Claude URL: "+req.URL.Path)
	}
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" || req.Header.Get("X-Api-Key") != "" {
		return fail(http.StatusUnauthorized, "want a bearer token and no x-api-key")
	}
	raw, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return fail(http.StatusBadRequest, "body: "+err.Error())
	}
	if body["anthropic_version"] != VertexVersion {
		return fail(http.StatusBadRequest, fmt.Sprintf("anthropic_version %v", body["anthropic_version"]))
	}
	if _, has := body["model"]; has {
		return fail(http.StatusBadRequest, "model belongs in the URL")
	}
	if stream, _ := body["stream"].(bool); stream != (m[4] == "streamRawPredict") {
		return fail(http.StatusBadRequest, "stream flag and method disagree")
	}
	delete(body, "anthropic_version")
	body["model"] = m[3]
	raw, _ = json.Marshal(body)
	out := req.Clone(req.Context())
	out.URL.Path = "/v1/messages"
	out.Header.Del("Authorization")
	out.Header.Set("X-Api-Key", tok)
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	return s.next.RoundTrip(out)
}

func vertexModel(s modeltest.Server) *Messages {
	next := s.HTTPClient.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	key := s.APIKey
	return NewMessages(Config{BaseURL: s.BaseURL, Vertex: &Vertex{Project: "test-proj", Location: "us-east5"},
		Token:            func(context.Context) (string, error) { return key, nil },
		HTTPClient:       &http.Client{Transport: vertexShim{next: next, project: "test-proj", location: "us-east5"}},
		MaxResponseBytes: s.MaxResponseBytes, MaxRetries: -1, Model: "claude-sonnet-4-5@20250929"})
}

// TestVertexModelContract runs the Model conformance suite against Claude
// on Vertex AI: a fake Messages server behind what Vertex checks.
func TestVertexModelContract(t *testing.T) {
	modeltest.Run(t, modeltest.AnthropicWire, func(t *testing.T, s modeltest.Server) runlet.Model { return vertexModel(s) })
}

// capture answers every request with a canned Messages response and
// keeps the last request.
type capture struct {
	req  *http.Request
	body []byte
}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	c.req = req
	c.body, _ = io.ReadAll(req.Body)
	req.Body.Close()
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// TestVertexURLs: Claude on Vertex AI is reached at the location's own
// endpoint (the global one for "global"), with the model, escaped, in the
// path; the body carries anthropic_version and no model; no API key from
// the environment goes to Google.
func TestVertexURLs(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-never-to-google")
	t.Setenv("ANTHROPIC_BASE_URL", "https://proxy.example")
	cases := []struct {
		location, model string
		stream          bool
		want            string
	}{
		{"us-east5", "claude-sonnet-4-5@20250929", false, "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"},
		{"global", "claude-haiku-4-5@20251001", true, "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/anthropic/models/claude-haiku-4-5@20251001:streamRawPredict"},
		{"europe-west1", "odd/model", false, "https://europe-west1-aiplatform.googleapis.com/v1/projects/my-proj/locations/europe-west1/publishers/anthropic/models/odd%2Fmodel:rawPredict"},
	}
	for _, c := range cases {
		rt := &capture{}
		m := NewMessages(Config{Vertex: &Vertex{Project: "my-proj", Location: c.location}, Model: c.model,
			Token: func(context.Context) (string, error) { return "ya29.tok", nil }, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1})
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
		if c.stream {
			for _, err := range m.Stream(context.Background(), req) {
				if err != nil {
					t.Fatal(err)
				}
			}
		} else if _, err := m.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if got := rt.req.URL.String(); got != c.want {
			t.Errorf("URL %s, want %s", got, c.want)
		}
		if got := rt.req.Header.Get("Authorization"); got != "Bearer ya29.tok" || rt.req.Header.Get("X-Api-Key") != "" {
			t.Errorf("Authorization %q, x-api-key %q", got, rt.req.Header.Get("X-Api-Key"))
		}
		var body map[string]any
		if err := json.Unmarshal(rt.body, &body); err != nil {
			t.Fatal(err)
		}
		if _, has := body["model"]; has || body["anthropic_version"] != "vertex-2023-10-16" || body["max_tokens"] == nil {
			t.Errorf("body %s", rt.body)
		}
	}
}

// TestVertexMisconfigured: a Vertex without a project, or with a location
// that is not a region name (it becomes a host name), fails every call
// before anything is sent.
func TestVertexMisconfigured(t *testing.T) {
	for _, v := range []Vertex{{Location: "us-east5"}, {Project: "p"}, {Project: "p", Location: "evil.example/"}} {
		rt := &capture{}
		m := NewMessages(Config{Vertex: &v, Model: "claude", HTTPClient: &http.Client{Transport: rt}})
		_, err := m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || !errors.Is(err, runlet.ErrInvalidRequest) || !strings.Contains(err.Error(), "Vertex") || rt.req != nil {
			t.Errorf("%+v: err = %v, sent %v", v, err, rt.req != nil)
		}
	}
}
