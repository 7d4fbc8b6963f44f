package anthropic

import (
	"context"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/httpc"
)

// Defaults for Config.
const (
	// DefaultBaseURL is Anthropic's API root (without the /v1 path).
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultVersion is the anthropic-version header sent when Config.Version
	// is empty. The adapter speaks this version's wire format; see Config.Version.
	DefaultVersion = "2023-06-01"
	// DefaultMaxTokens is the max_tokens sent when neither the request
	// (Settings.MaxOutputTokens or the "max_tokens" option) nor
	// Config.MaxTokens sets one; the Messages API requires the field.
	DefaultMaxTokens = 4096
	// DefaultName labels errors and reasoning state made by this adapter.
	DefaultName = "anthropic"
)

// Config is the connection-level configuration of the Messages adapter.
// Everything request-level (temperature, thinking, top_k, ...) goes in
// runlet.ModelRequest instead.
type Config struct {
	// APIKey is sent as the x-api-key header. Empty means
	// $ANTHROPIC_API_KEY; when that is empty too no key header is sent (for
	// a proxy that adds its own credentials through Headers).
	APIKey string
	// BaseURL is the API root, such as "https://api.anthropic.com"; requests
	// go to BaseURL + "/v1/messages" (a BaseURL that already ends in "/v1"
	// gets "/messages"). Empty means $ANTHROPIC_BASE_URL, else DefaultBaseURL.
	BaseURL string
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
	// Version is the anthropic-version header. Empty means DefaultVersion
	// ("2023-06-01"). Version "2026-10-21" and later no longer accept the
	// sampling parameters: with such a version the adapter leaves
	// Settings.Temperature and Settings.TopP out of the body (the
	// "temperature", "top_p" and "top_k" options are still sent as given).
	Version string
	// Betas are sent, comma-separated, in the anthropic-beta header, such as
	// "interleaved-thinking-2025-05-14". The "betas" request option adds more
	// for one request.
	Betas []string
	// Vertex, when set, sends requests to Claude on Google Vertex AI:
	// {root}/v1/projects/{Project}/locations/{Location}/publishers/anthropic/models/{model}:rawPredict
	// (:streamRawPredict when streaming), with the model in the URL rather
	// than the body and "anthropic_version": VertexVersion in the body.
	// root is BaseURL when set (a private endpoint, a proxy, a test
	// server), else the location's endpoint
	// (https://aiplatform.googleapis.com for "global",
	// https://{Location}-aiplatform.googleapis.com for a region). Vertex
	// AI wants an access token: set Token (package
	// github.com/runlet/runlet/cloud/vertex makes one from Application
	// Default Credentials). A Vertex without Project or Location, or with
	// a Location that is not a region name, fails every call with a
	// *runlet.ProviderError wrapping runlet.ErrInvalidRequest.
	Vertex *Vertex
	// Model is the model name sent with every request, such as
	// "claude-sonnet-4-5" (on Vertex AI, "claude-sonnet-4-5@20250929"). A request option "model" overrides it.
	Model string
	// MaxTokens is the max_tokens sent when the request sets none. Zero
	// means DefaultMaxTokens.
	MaxTokens int
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
	// MaxRetries bounds retries of failed requests (408, 409, 429, 5xx
	// including 529 overloaded, connection errors, and streams that fail
	// before their first delta). Zero means 2; negative means none.
	MaxRetries int
	// MaxResponseBytes limits the text, reasoning (with signatures) and tool
	// input one response may accumulate; past it the call fails with a
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
	// Name labels errors and the reasoning state this adapter produces
	// (runlet.ReasoningPart.Provider). Empty means "anthropic". Two adapters
	// with the same Name accept each other's thinking signatures, so give a
	// different Name to an endpoint that cannot verify Anthropic's.
	Name string
}

// VertexVersion is the anthropic_version the adapter sends in the body of
// a request to Claude on Vertex AI (see Config.Vertex).
const VertexVersion = "vertex-2023-10-16"

// Vertex names the Google Cloud project and location whose Vertex AI
// endpoint serves the model (see Config.Vertex).
type Vertex struct {
	// Project is the Google Cloud project ID.
	Project string
	// Location is a region, such as "us-east5", or "global".
	Location string
}

// resolved is a Config with defaults applied.
type resolved struct {
	name      string
	url       string
	model     string
	maxTokens int
	version   string
	retries   int
	client    *httpc.Client
	limit     int64 // MaxResponseBytes, resolved
	// vertex is the root of Anthropic's models on Vertex AI (see
	// Config.Vertex), "" for the Messages API.
	vertex string
	// err fails every call: the configuration cannot work (a Vertex
	// without a project).
	err error
}

func (c Config) resolve() resolved {
	name := c.Name
	if name == "" {
		name = DefaultName
	}
	key := c.APIKey
	if c.Token != nil {
		key = "" // the token replaces the key
	} else if key == "" {
		key = os.Getenv("ANTHROPIC_API_KEY")
	}
	base := c.BaseURL
	var vertex string
	var err error
	if c.Vertex != nil {
		if vertex, err = httpc.VertexPublisherURL(base, c.Vertex.Project, c.Vertex.Location, "anthropic"); err != nil {
			err = httpc.RequestError(name, "Config.Vertex", err)
		}
		key = "" // Vertex AI takes an access token only
	}
	if base == "" {
		base = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if base == "" {
		base = DefaultBaseURL
	}
	// The root's query, if any, stays after the path (httpc.JoinURL).
	url := httpc.JoinURL(base, "/v1/messages")
	if strings.HasSuffix(httpc.URLPath(base), "/v1") {
		url = httpc.JoinURL(base, "/messages")
	}
	version := c.Version
	if version == "" {
		version = DefaultVersion
	}
	h := make(http.Header, len(c.Headers)+4)
	for k, v := range c.Headers {
		h[http.CanonicalHeaderKey(k)] = v
	}
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	h.Set("Anthropic-Version", version)
	if betas := joinBetas(h.Values("Anthropic-Beta"), c.Betas); betas != "" {
		h.Set("Anthropic-Beta", betas)
	}
	retries := c.MaxRetries
	switch {
	case retries == 0:
		retries = httpc.DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	return resolved{
		name:      name,
		url:       url,
		model:     c.Model,
		maxTokens: max(c.MaxTokens, 0),
		version:   version,
		retries:   retries,
		limit:     httpc.NewBudget(name, c.MaxResponseBytes).Limit(),
		// The adapter sends with PostOnce inside the client's Retry, so a
		// stream that fails before its first delta is retried too.
		client: httpc.NewClient(name, c.HTTPClient, retries, h, c.Headers, c.AllowInsecureHTTP).WithStreamIdle(c.StreamIdleTimeout).WithToken(c.Token),
		vertex: vertex,
		err:    err,
	}
}

// joinBetas merges beta header values (each possibly comma-separated),
// dropping blanks and duplicates and keeping first-seen order.
func joinBetas(lists ...[]string) string {
	var out []string
	for _, list := range lists {
		for _, v := range list {
			for b := range strings.SplitSeq(v, ",") {
				b = strings.TrimSpace(b)
				if b != "" && !contains(out, b) {
					out = append(out, b)
				}
			}
		}
	}
	return strings.Join(out, ",")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// samplingRemoved reports whether an API version no longer accepts
// temperature, top_p and top_k (2026-10-21 and later). Versions are dates,
// so they compare as strings.
func samplingRemoved(version string) bool { return version >= "2026-10-21" }
