package runlettest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// CassetteVersion is the cassette file format version this package writes
// and reads.
const CassetteVersion = 1

// Cassette is a recorded sequence of HTTP exchanges. It marshals to a
// readable JSON file: JSON bodies are stored as JSON, text bodies (such as
// server-sent event streams) as strings.
type Cassette struct {
	Version      int           `json:"version"`
	Interactions []Interaction `json:"interactions"`
}

// Interaction is one recorded request and its response.
type Interaction struct {
	Request  RecordedRequest  `json:"request"`
	Response RecordedResponse `json:"response"`
}

// RecordedRequest is a request as sent, minus credentials (see NewRecorder).
type RecordedRequest struct {
	Method string      `json:"method"`
	URL    string      `json:"url"`
	Header http.Header `json:"header,omitempty"`
	Body
}

// RecordedResponse is a response as received.
type RecordedResponse struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
	Body
}

// Body is a recorded message body, in the most readable of three forms: a
// JSON object or array in JSON, UTF-8 text in Text, anything else in Base64.
// At most one field is set; none means an empty body.
type Body struct {
	JSON   json.RawMessage `json:"json,omitempty"`
	Text   string          `json:"text,omitempty"`
	Base64 string          `json:"base64,omitempty"`
}

// BodyFrom returns the Body form of b.
func BodyFrom(b []byte) Body {
	t := bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return Body{}
	case len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t):
		return Body{JSON: json.RawMessage(bytes.Clone(t))}
	case utf8.Valid(b):
		return Body{Text: string(b)}
	default:
		return Body{Base64: base64.StdEncoding.EncodeToString(b)}
	}
}

// Bytes returns the body's bytes. A JSON body comes back compact: the bytes
// may differ from the wire's in whitespace, never in meaning.
func (b Body) Bytes() []byte {
	switch {
	case len(b.JSON) > 0:
		var buf bytes.Buffer
		if err := json.Compact(&buf, b.JSON); err != nil {
			return bytes.Clone(b.JSON)
		}
		return buf.Bytes()
	case b.Text != "":
		return []byte(b.Text)
	case b.Base64 != "":
		d, _ := base64.StdEncoding.DecodeString(b.Base64)
		return d
	}
	return nil
}

// LoadCassette reads a cassette file written by Cassette.Save or
// Recorder.Save.
func LoadCassette(path string) (*Cassette, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("runlettest: %w", err)
	}
	c, err := ParseCassette(data)
	if err != nil {
		return nil, fmt.Errorf("runlettest: %s: %w", path, err)
	}
	return c, nil
}

// ParseCassette decodes a cassette from its JSON form.
func ParseCassette(data []byte) (*Cassette, error) {
	var c Cassette
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("not a cassette: %w", err)
	}
	if c.Version != CassetteVersion {
		return nil, fmt.Errorf("cassette version %d, want %d", c.Version, CassetteVersion)
	}
	for i, in := range c.Interactions {
		if in.Request.Method == "" || in.Request.URL == "" || in.Response.Status == 0 {
			return nil, fmt.Errorf("interaction %d: method, url and status are required", i)
		}
		for _, b := range []Body{in.Request.Body, in.Response.Body} {
			if _, err := base64.StdEncoding.DecodeString(b.Base64); err != nil {
				return nil, fmt.Errorf("interaction %d: bad base64 body: %w", i, err)
			}
		}
	}
	return &c, nil
}

// Save writes the cassette as indented JSON, creating the directory if
// needed.
func (c *Cassette) Save(path string) error {
	out := *c
	out.Version = CassetteVersion
	if out.Interactions == nil {
		out.Interactions = []Interaction{}
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("runlettest: encoding cassette: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("runlettest: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("runlettest: %w", err)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Recorder

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

// ---------------------------------------------------------------------------
// Replayer

// ReplayOption configures a Replayer.
type ReplayOption func(*Replayer)

// IgnoreFields leaves JSON fields out when request bodies are compared.
// A path is dot-separated: object keys, array indexes, or "*" for any key or
// index, such as "metadata.trace_id", "messages.*.content" or "tools.0".
// The paths in a mismatch diff use the same syntax.
func IgnoreFields(paths ...string) ReplayOption {
	return func(r *Replayer) {
		for _, p := range paths {
			r.ignore = append(r.ignore, strings.Split(p, "."))
		}
	}
}

// IgnoreBody compares only the method and the URL path and query of each
// request, not its body: the recording is replayed whatever was asked. Demos
// use it; tests usually should not.
func IgnoreBody() ReplayOption { return func(r *Replayer) { r.ignoreBody = true } }

// WithPacing delivers each response body in pieces (one server-sent event,
// or one line, at a time) with a pause of d before each, so a replayed stream
// arrives the way a live one does. The pause ends early when the request's
// context is cancelled.
func WithPacing(d time.Duration) ReplayOption { return func(r *Replayer) { r.pace = d } }

// Replayer is an http.RoundTripper that answers requests from a Cassette, in
// order, without using the network. Each request must match the next
// recorded one: same method, same URL path and query (the host is ignored, so
// a cassette recorded against a provider replays behind any base URL), and an
// equal body — JSON bodies are compared as JSON, so key order and whitespace
// do not matter (see IgnoreFields). A request that does not match fails with
// a *MismatchError describing the difference, and does not consume the
// recording. It is safe for concurrent use.
//
// With a Recorder, a test talks to a live provider once and runs offline (in
// CI) ever after:
//
//	var rt http.RoundTripper
//	if os.Getenv("RECORD") != "" {
//		rec := runlettest.NewRecorder(nil)
//		t.Cleanup(func() { _ = rec.Save("testdata/agent.cassette.json") })
//		rt = rec
//	} else {
//		c, err := runlettest.LoadCassette("testdata/agent.cassette.json")
//		if err != nil {
//			t.Fatal(err)
//		}
//		rep := runlettest.NewReplayer(c)
//		t.Cleanup(func() {
//			if err := rep.Done(); err != nil {
//				t.Error(err)
//			}
//		})
//		rt = rep
//	}
//	model := openai.NewChatCompletions(openai.Config{
//		Model: "gpt-4o-mini", HTTPClient: &http.Client{Transport: rt},
//		MaxRetries: -1, // a mismatch is not worth retrying
//	})
type Replayer struct {
	cassette   *Cassette
	ignore     [][]string
	ignoreBody bool
	pace       time.Duration

	mu   sync.Mutex
	next int
	errs []error
}

// NewReplayer returns a Replayer for c.
func NewReplayer(c *Cassette, opts ...ReplayOption) *Replayer {
	if c == nil {
		c = &Cassette{}
	}
	r := &Replayer{cassette: c}
	for _, o := range opts {
		o(r)
	}
	return r
}

// ErrCassetteEnd is wrapped by the error a Replayer returns for a request
// after the last recorded one.
var ErrCassetteEnd = errors.New("runlettest: no more recorded interactions")

// MismatchError is a request that does not match the recording.
type MismatchError struct {
	// Index is the recorded interaction the request was compared with.
	Index int
	// Method and URL identify the request.
	Method, URL string
	// Diffs lists the differences, one per line, such as
	// `body: messages.0.content: recorded "Hi", got "Hello"`.
	Diffs []string
}

// Retryable reports false: sending the same request again cannot match
// better, so the adapters' HTTP layer fails at once instead of retrying.
func (e *MismatchError) Retryable() bool { return false }

func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "runlettest: %s %s does not match recorded interaction %d:", e.Method, e.URL, e.Index)
	for _, d := range e.Diffs {
		b.WriteString("\n    ")
		b.WriteString(d)
	}
	return b.String()
}

// RoundTrip implements http.RoundTripper.
func (r *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("runlettest: reading request body: %w", err)
		}
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.next >= len(r.cassette.Interactions) {
		err := fmt.Errorf("%w: %s %s is request %d, the recording has %d", ErrCassetteEnd,
			req.Method, req.URL.Path, r.next+1, len(r.cassette.Interactions))
		r.errs = append(r.errs, err)
		r.mu.Unlock()
		return nil, err
	}
	idx := r.next
	in := r.cassette.Interactions[idx]
	if diffs := r.compare(in.Request, req, body); len(diffs) > 0 {
		err := &MismatchError{Index: idx, Method: req.Method, URL: req.URL.Path, Diffs: diffs}
		r.errs = append(r.errs, err)
		r.mu.Unlock()
		return nil, err
	}
	r.next++
	r.mu.Unlock()

	respBody := in.Response.Body.Bytes()
	header := http.Header{}
	for k, v := range in.Response.Header {
		header[k] = slices.Clone(v)
	}
	header.Del("Content-Length")
	header.Del("Content-Encoding") // the recorded body is already decoded
	var rc io.ReadCloser = io.NopCloser(bytes.NewReader(respBody))
	if r.pace > 0 {
		rc = &pacedBody{ctx: req.Context(), rest: respBody, pause: r.pace}
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", in.Response.Status, http.StatusText(in.Response.Status)),
		StatusCode:    in.Response.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          rc,
		ContentLength: int64(len(respBody)),
		Request:       req,
	}, nil
}

// Remaining reports how many recorded interactions have not been replayed.
func (r *Replayer) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cassette.Interactions) - r.next
}

// Err returns the failures so far (mismatches, requests past the end of the
// recording), joined, or nil.
func (r *Replayer) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// Done returns Err, plus an error if some recorded interactions were never
// replayed. Call it at the end of a test.
func (r *Replayer) Done() error {
	err := r.Err()
	if n := r.Remaining(); n > 0 {
		err = errors.Join(err, fmt.Errorf("runlettest: %d recorded interaction(s) not replayed", n))
	}
	return err
}

func (r *Replayer) compare(rec RecordedRequest, req *http.Request, body []byte) []string {
	var diffs []string
	if rec.Method != req.Method {
		diffs = append(diffs, fmt.Sprintf("method: recorded %s, got %s", rec.Method, req.Method))
	}
	ru, err := url.Parse(rec.URL)
	if err != nil {
		return append(diffs, fmt.Sprintf("recorded URL %q does not parse: %v", rec.URL, err))
	}
	if ru.Path != req.URL.Path {
		diffs = append(diffs, fmt.Sprintf("path: recorded %s, got %s", ru.Path, req.URL.Path))
	}
	if rq, gq := ru.Query(), req.URL.Query(); !sameQuery(rq, gq) {
		diffs = append(diffs, fmt.Sprintf("query: recorded %q, got %q", rq.Encode(), redactQuery(gq).Encode()))
	}
	if r.ignoreBody {
		return diffs
	}
	for _, d := range diffBodies(rec.Body.Bytes(), body, r.ignore) {
		diffs = append(diffs, "body: "+d)
	}
	return diffs
}

func sameQuery(rec, got url.Values) bool {
	got = redactQuery(got)
	if len(rec) != len(got) {
		return false
	}
	for k, v := range rec {
		if !slices.Equal(v, got[k]) {
			return false
		}
	}
	return true
}

func redactQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		if slices.Contains(redactedParams, strings.ToLower(k)) {
			out[k] = []string{"REDACTED"}
		} else {
			out[k] = v
		}
	}
	return out
}

// pacedBody hands out a body one event (or line) at a time, pausing before
// each.
type pacedBody struct {
	ctx   context.Context
	rest  []byte
	cur   []byte
	pause time.Duration
}

func (p *pacedBody) Read(b []byte) (int, error) {
	if len(p.cur) == 0 {
		if len(p.rest) == 0 {
			return 0, io.EOF
		}
		t := time.NewTimer(p.pause)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return 0, p.ctx.Err()
		case <-t.C:
		}
		n := bytes.Index(p.rest, []byte("\n\n"))
		if n < 0 {
			n = bytes.IndexByte(p.rest, '\n')
			if n < 0 {
				n = len(p.rest) - 1
			}
			n++
		} else {
			n += 2
		}
		p.cur, p.rest = p.rest[:n], p.rest[n:]
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

func (p *pacedBody) Close() error { p.rest, p.cur = nil, nil; return nil }
