package runlettest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// DefaultRedactedHeaders are the headers a Recorder never saves: they carry
// credentials.
var DefaultRedactedHeaders = []string{
	"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key",
	"X-Goog-Api-Key", "Cookie", "Set-Cookie",
}

// redactedParams are URL query parameters whose values a Recorder replaces.
var redactedParams = []string{"key", "api_key", "api-key", "apikey", "access_token", "token"}

// RecorderOption configures a Recorder.
type RecorderOption func(*Recorder)

// RedactHeaders adds headers (case-insensitive) that the Recorder must not
// save, besides DefaultRedactedHeaders.
func RedactHeaders(names ...string) RecorderOption {
	return func(r *Recorder) {
		for _, n := range names {
			r.redact[http.CanonicalHeaderKey(n)] = true
		}
	}
}

// Recorder is an http.RoundTripper that sends requests through another
// transport and records each exchange. Response bodies stream through
// unchanged while they are recorded; an exchange is complete when its body
// was read to the end or closed. It is safe for concurrent use; exchanges are
// kept in the order their requests started. Requests that fail in the
// transport (no response) are not recorded.
//
// Credentials are never recorded: the headers in DefaultRedactedHeaders (and
// any added with RedactHeaders) are dropped, and the values of URL query
// parameters such as "key" or "api_key" are replaced by "REDACTED".
//
// See Replayer for the record-once, replay-in-CI pattern.
type Recorder struct {
	inner  http.RoundTripper
	redact map[string]bool

	mu           sync.Mutex
	interactions []*Interaction
}

// NewRecorder returns a Recorder sending requests through inner
// (http.DefaultTransport if nil).
func NewRecorder(inner http.RoundTripper, opts ...RecorderOption) *Recorder {
	if inner == nil {
		inner = http.DefaultTransport
	}
	r := &Recorder{inner: inner, redact: map[string]bool{}}
	for _, h := range DefaultRedactedHeaders {
		r.redact[http.CanonicalHeaderKey(h)] = true
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	out := req
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("runlettest: reading request body: %w", err)
		}
		out = req.Clone(req.Context())
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
	}
	in := &Interaction{Request: RecordedRequest{
		Method: req.Method,
		URL:    redactURL(req.URL),
		Header: r.clean(req.Header),
		Body:   BodyFrom(body),
	}}
	resp, err := r.inner.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	in.Response = RecordedResponse{Status: resp.StatusCode, Header: r.clean(resp.Header)}
	r.mu.Lock()
	r.interactions = append(r.interactions, in)
	r.mu.Unlock()
	resp.Body = &teeBody{rc: resp.Body, done: func(b []byte) {
		r.mu.Lock()
		in.Response.Body = BodyFrom(b)
		r.mu.Unlock()
	}}
	return resp, nil
}

func (r *Recorder) clean(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		if !r.redact[http.CanonicalHeaderKey(k)] {
			out[k] = slices.Clone(v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			if slices.Contains(redactedParams, strings.ToLower(k)) {
				q.Set(k, "REDACTED")
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// Cassette returns a copy of what was recorded so far. A response whose
// body is still being read holds the part read so far.
func (r *Recorder) Cassette() *Cassette {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &Cassette{Version: CassetteVersion, Interactions: make([]Interaction, len(r.interactions))}
	for i, in := range r.interactions {
		c.Interactions[i] = *in
	}
	return c
}

// Save writes what was recorded so far to a cassette file.
func (r *Recorder) Save(path string) error { return r.Cassette().Save(path) }

// teeBody copies what the caller reads and hands it over once, at EOF or
// Close.
type teeBody struct {
	rc   io.ReadCloser
	buf  bytes.Buffer
	once sync.Once
	done func([]byte)
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.buf.Write(p[:n])
	if err == io.EOF {
		t.finish()
	}
	return n, err
}

func (t *teeBody) Close() error {
	t.finish()
	return t.rc.Close()
}

func (t *teeBody) finish() { t.once.Do(func() { t.done(t.buf.Bytes()) }) }
