package runlettest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

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
// after the last recorded one. That error is final (its Retryable method
// reports false): asking again cannot find an answer the recording lacks.
var ErrCassetteEnd = errors.New("runlettest: no more recorded interactions")

// endError is a request after the last recorded one.
type endError struct{ msg string }

func (e *endError) Error() string   { return e.msg }
func (e *endError) Unwrap() error   { return ErrCassetteEnd }
func (e *endError) Retryable() bool { return false }

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
		err := &endError{fmt.Sprintf("%v: %s %s is request %d, the recording has %d", ErrCassetteEnd,
			req.Method, req.URL.Path, r.next+1, len(r.cassette.Interactions))}
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
	rc := io.NopCloser(bytes.NewReader(respBody))
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
