package gemini

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/httpc"
)

// Defaults for Config.
const (
	// DefaultBaseURL is the Gemini API root with its API version; requests
	// go to DefaultBaseURL + "/models/{model}:generateContent".
	DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"
	// DefaultName labels errors and the continuation state (thought
	// signatures) made by this adapter.
	DefaultName = "gemini"
)

// Config is the connection-level configuration of the Gemini adapter.
// Everything request-level (temperature, thinking, safety settings, ...)
// goes in runlet.ModelRequest instead.
type Config struct {
	// APIKey is sent as the x-goog-api-key header. Empty means
	// $GEMINI_API_KEY, else $GOOGLE_API_KEY; when those are empty too, or
	// Headers sets Authorization (a Vertex AI access token), no key is sent.
	APIKey string
	// Token, when set, is asked for the bearer token of every request (each
	// attempt), sent as "Authorization: Bearer TOKEN": an access token that
	// expires, such as Vertex AI's from Application Default Credentials or
	// Azure's from Entra ID (the nested module github.com/runlet/runlet/cloud
	// makes these). It must cache and refresh its token itself. It replaces
	// APIKey (no key is read from the environment either). Its tokens are
	// credentials like Headers: never in errors, dropped on a redirect to
	// another origin, never sent over plain HTTP off loopback. An error it
	// returns fails the call with a *runlet.ProviderError wrapping it, so it
	// should say which credential source it tried.
	Token func(ctx context.Context) (string, error) `json:"-"`
	// BaseURL is everything before "/models/{model}:generateContent".
	// Empty means DefaultBaseURL; a URL without a path, such as
	// "https://generativelanguage.googleapis.com", gets "/v1beta". For
	// Vertex AI use
	// "https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}/publishers/google"
	// with Token giving Google access tokens.
	BaseURL string
	// Vertex, when set, sends requests to Gemini on Google Vertex AI:
	// {root}/v1/projects/{Project}/locations/{Location}/publishers/google/models/{model}:generateContent
	// (and :streamGenerateContent?alt=sse), root being BaseURL when set (a
	// private endpoint, a proxy, a test server), else the location's
	// endpoint (https://aiplatform.googleapis.com for "global",
	// https://{Location}-aiplatform.googleapis.com for a region). Vertex
	// AI wants an access token: set Token (package
	// github.com/runlet/runlet/cloud/vertex makes one from Application
	// Default Credentials). A Vertex without Project or Location, or with
	// a Location that is not a region name, fails every call with a
	// *runlet.ProviderError wrapping runlet.ErrInvalidRequest.
	Vertex *Vertex
	// Model is the model name sent with every request, such as
	// "gemini-2.5-flash" (a "models/" prefix is accepted). A request option
	// "model" overrides it.
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient. Deadlines
	// come from the context, so it needs no Timeout.
	HTTPClient *http.Client `json:"-"`
	// Headers are added to every request. They are treated as credentials:
	// never in errors or printed values, dropped on a redirect to another
	// scheme, host or port, and never sent over plain HTTP off loopback
	// (see AllowInsecureHTTP).
	Headers http.Header
	// AllowInsecureHTTP lets the key and Headers go over plain http:// to
	// a host that is not loopback (127.0.0.0/8, ::1, localhost); without
	// it such a request fails with a *runlet.ProviderError wrapping
	// runlet.ErrInvalidRequest, as does a redirect that would take them
	// there. Local servers need nothing. The config file's key is
	// allow_insecure_http.
	AllowInsecureHTTP bool
	// MaxRetries bounds retries of failed requests (408, 409, 429, 5xx,
	// connection errors, streams that fail before their first delta, and
	// malformed function calls), waiting as long as a google.rpc.RetryInfo
	// asks. Zero means 2; negative means none.
	MaxRetries int
	// MaxResponseBytes limits the text, thoughts, signatures and function
	// calls one response may accumulate; past it the call fails with a
	// *runlet.ProviderError wrapping runlet.ErrResponseTooLarge. A
	// non-streamed body may be twice as large (JSON escaping), one stream
	// event as large; both are counted after decompression (gzip), and a
	// body or event that goes on past its bound is refused having cost
	// about that bound in memory. Every part (text, reasoning, tool call,
	// content block) counts 512 bytes besides its own, as that is about
	// what it costs in memory however small it is: a response of many tiny
	// parts is refused before it grows the heap past a few times the
	// limit (64 MiB holds 131,072 parts). Zero means 64 MiB.
	MaxResponseBytes int64
	// StreamIdleTimeout bounds how long a stream may go without a byte
	// from the server, its response headers included: past it the call
	// fails with a retryable *runlet.ProviderError wrapping
	// runlet.ErrStreamIncomplete (retried if nothing reached the caller
	// yet). Zero means 10 minutes; negative, no bound (the context's
	// deadline only).
	StreamIdleTimeout time.Duration
	// Name labels errors and the thought signatures this adapter produces
	// (the Provider of parts). Empty means "gemini". Two adapters with the
	// same Name accept each other's signatures.
	Name string
}

// Vertex names the Google Cloud project and location whose Vertex AI
// endpoint serves the model (see Config.Vertex).
type Vertex struct {
	// Project is the Google Cloud project ID.
	Project string
	// Location is a region, such as "us-central1", or "global".
	Location string
}

// resolved is a Config with defaults applied.
type resolved struct {
	name   string
	base   string
	model  string
	limit  int64 // MaxResponseBytes, resolved
	client *httpc.Client
	// err fails every call: the configuration cannot work (a Vertex
	// without a project).
	err error
	// generate and stream are model's endpoints, made once.
	generate, stream string
}

func (c Config) resolve() resolved {
	name := c.Name
	if name == "" {
		name = DefaultName
	}
	h := make(http.Header, len(c.Headers)+1)
	for k, v := range c.Headers {
		h[http.CanonicalHeaderKey(k)] = v
	}
	key := c.APIKey
	if c.Token != nil {
		key = "" // the token replaces the key
	} else if key == "" && h.Get("Authorization") == "" && c.Vertex == nil {
		key = os.Getenv("GEMINI_API_KEY")
		if key == "" {
			key = os.Getenv("GOOGLE_API_KEY")
		}
	}
	if key != "" {
		h.Set("X-Goog-Api-Key", key)
	}
	base := strings.TrimRight(c.BaseURL, "/")
	var err error
	switch {
	case c.Vertex != nil:
		if base, err = httpc.VertexPublisherURL(base, c.Vertex.Project, c.Vertex.Location, "google"); err != nil {
			err = httpc.RequestError(name, "Config.Vertex", err)
		}
	case base == "":
		base = DefaultBaseURL
	default:
		if u, perr := url.Parse(base); perr == nil && u.Path == "" {
			base = httpc.JoinURL(base, "/v1beta")
		}
	}
	retries := c.MaxRetries
	switch {
	case retries == 0:
		retries = httpc.DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	r := resolved{
		name:   name,
		base:   base,
		model:  c.Model,
		limit:  httpc.NewBudget(name, c.MaxResponseBytes).Limit(),
		client: httpc.NewClient(name, c.HTTPClient, retries, h, c.Headers, c.AllowInsecureHTTP).WithStreamIdle(c.StreamIdleTimeout).WithToken(c.Token),
		err:    err,
	}
	if r.model != "" {
		r.generate, r.stream = r.makeEndpoint(r.model, false), r.makeEndpoint(r.model, true)
	}
	return r
}

// endpoint is the URL of a model's method.
func (r *resolved) endpoint(model string, stream bool) string {
	if model == r.model && r.generate != "" {
		if stream {
			return r.stream
		}
		return r.generate
	}
	return r.makeEndpoint(model, stream)
}

func (r *resolved) makeEndpoint(model string, stream bool) string {
	model = strings.TrimPrefix(model, "models/")
	if stream {
		return httpc.JoinURL(r.base, "/models/"+url.PathEscape(model)+":streamGenerateContent?alt=sse")
	}
	return httpc.JoinURL(r.base, "/models/"+url.PathEscape(model)+":generateContent")
}
