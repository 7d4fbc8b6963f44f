// Package vertextest is a fake Vertex AI on loopback, for tests and
// offline examples: it checks what Vertex AI checks (the URL of a
// publisher's model for the server's project and location, a bearer
// token and no API key, alt=sse exactly on streamGenerateContent, and for
// Claude "anthropic_version": "vertex-2023-10-16" in the body and no
// model there, stream exactly on streamRawPredict), answering as Vertex
// does when one is wrong, and serves a right request from package
// runlettest's scripted Gemini or Anthropic server.
//
//	srv := vertextest.NewServer("my-proj", "us-central1")
//	defer srv.Close()
//	srv.Gemini.EnqueueReplies(runlettest.WireReply{Text: "hi"})
//	model, _ := vertex.Gemini(ctx, gemini.Config{Model: "gemini-2.5-flash", BaseURL: srv.URL,
//		Vertex: &gemini.Vertex{Project: "my-proj", Location: "us-central1"}, Token: srv.TokenFunc()})
package vertextest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/runlet/runlet/runlettest"
)

// Token is the access token the server accepts.
const Token = "ya29.vertextest-token"

// Server is a fake Vertex AI endpoint (its URL is the adapters'
// Config.BaseURL).
type Server struct {
	*httptest.Server
	// Gemini and Claude answer the requests for Google's and Anthropic's
	// models; script them with EnqueueReplies.
	Gemini *runlettest.GeminiServer
	Claude *runlettest.AnthropicServer
	// Project and Location are the only ones served.
	Project, Location string
}

var path = regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/publishers/(google|anthropic)/models/([^/:]+):([A-Za-z]+)$`)

// NewServer starts a fake Vertex AI for project and location. The caller
// must Close it.
func NewServer(project, location string) *Server {
	s := &Server{Gemini: runlettest.NewGeminiServer(), Claude: runlettest.NewAnthropicServer(), Project: project, Location: location}
	s.Gemini.RequireAPIKey(Token)
	s.Claude.RequireAPIKey(Token)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// TokenFunc returns a token source for the adapters' Config.Token that
// gives Token.
func (s *Server) TokenFunc() func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return Token, nil }
}

// Close shuts the server and its scripted servers down.
func (s *Server) Close() {
	s.Server.Close()
	s.Gemini.Close()
	s.Claude.Close()
}

// fail answers as Vertex AI does, with a google.rpc.Status.
func fail(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":%q}}`, code, msg, status)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	m := path.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil || m[1] != s.Project || m[2] != s.Location {
		fail(w, http.StatusNotFound, "NOT_FOUND", "vertextest: no model at "+r.Method+" "+r.URL.Path)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok != Token || r.Header.Get("X-Goog-Api-Key") != "" || r.Header.Get("X-Api-Key") != "" || r.URL.Query().Has("key") {
		fail(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token.")
		return
	}
	publisher, model, method := m[3], m[4], m[5]
	inner := r.Clone(r.Context())
	inner.Header.Del("Authorization")
	if publisher == "google" {
		if (method != "generateContent" && method != "streamGenerateContent") || (method == "streamGenerateContent") != (r.URL.RawQuery == "alt=sse") {
			fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "vertextest: want :generateContent, or :streamGenerateContent?alt=sse")
			return
		}
		inner.URL.Path = "/v1beta/models/" + model + ":" + method
		inner.Header.Set("X-Goog-Api-Key", tok)
		s.Gemini.Config.Handler.ServeHTTP(w, inner)
		return
	}
	if method != "rawPredict" && method != "streamRawPredict" {
		fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "vertextest: want :rawPredict or :streamRawPredict")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	var body map[string]any
	if err != nil || json.Unmarshal(raw, &body) != nil {
		fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "vertextest: the body is not a JSON object")
		return
	}
	stream, _ := body["stream"].(bool)
	_, hasModel := body["model"]
	switch {
	case body["anthropic_version"] != "vertex-2023-10-16":
		fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("anthropic_version: want vertex-2023-10-16, got %v", body["anthropic_version"]))
		return
	case hasModel:
		fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "model: Extra inputs are not permitted (the model goes in the URL)")
		return
	case stream != (method == "streamRawPredict"):
		fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "vertextest: stream must be true exactly on :streamRawPredict")
		return
	}
	delete(body, "anthropic_version")
	body["model"] = model
	raw, _ = json.Marshal(body)
	inner.URL.Path = "/v1/messages"
	inner.Header.Set("X-Api-Key", tok)
	inner.Body, inner.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	s.Claude.Config.Handler.ServeHTTP(w, inner)
}
