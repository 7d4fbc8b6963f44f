// Package httpc is the skeleton every provider adapter is built on: one
// POST with bounded retries, exponential backoff with jitter and
// Retry-After; error bodies mapped to *runlet.ProviderError; one secret
// redactor; and the Generate and Stream drivers that make an adapter's own
// Generate and Stream a few lines each:
//
//	func (m *Model) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
//		call, err := m.build(req, false) // a *runlet.ProviderError wrapping runlet.ErrInvalidRequest (see RequestError)
//		if err != nil {
//			return nil, err
//		}
//		return m.client.Generate(ctx, call, m.decode) // decode: *http.Response -> *runlet.ModelResponse
//	}
//
//	func (m *Model) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
//		return func(yield func(runlet.StreamEvent, error) bool) {
//			call, err := m.build(req, true)
//			if err != nil {
//				yield(runlet.StreamEvent{}, err)
//				return
//			}
//			m.client.Stream(ctx, call, yield, m.read) // read: events of one response, through emit
//		}
//	}
//
// A request is retried only before anything reached the caller, so stream
// bytes that reached the caller are never replayed; a non-streamed body
// that fails to read or decode (cut halfway, or a 200 holding an overload
// error) is retried like a failed request. Every error the drivers return
// has gone through Client.Redact.
package httpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/safehttp"
)

// Defaults for Client.
const (
	DefaultMaxRetries = 2
	defaultMinBackoff = 500 * time.Millisecond
	defaultMaxBackoff = 8 * time.Second
	// DefaultMaxRetryWait is the longest wait between attempts when
	// Client.MaxRetryWait is zero.
	DefaultMaxRetryWait = 60 * time.Second
	maxErrorBody        = 64 << 10
)

// Client posts JSON to one provider.
type Client struct {
	Provider string
	HTTP     *http.Client // nil means http.DefaultClient
	// MaxRetries is the number of retries after the first attempt; negative
	// means none.
	MaxRetries int
	// Header is sent with every request (auth, version, user headers). It is
	// never copied into errors.
	Header http.Header
	// MinBackoff and MaxBackoff bound the exponential backoff; zero means
	// 500ms and 8s.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryWait is the longest wait before a retry: a server that asks
	// (Retry-After) for longer gets its error returned at once, never a
	// retry sooner than it asked. Zero means DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// StreamIdle bounds how long a stream may go without a byte from the
	// server (see Stream); zero means DefaultStreamIdleTimeout, negative
	// no bound.
	StreamIdle time.Duration
	// Secrets are redacted from errors (see Redact) besides the credentials
	// in Header.
	Secrets []string
	// Token, when set, gives each attempt's bearer token (see TokenFunc);
	// it replaces any Authorization in Header. Every token it returned is a
	// credential like Header's: redacted from errors, dropped on a
	// redirect to another origin, never sent over plain HTTP off
	// loopback.
	Token TokenFunc
	// Policy keeps the credentials with their host (see package
	// safehttp): a redirect to another origin drops them, and a request
	// carrying one over plain HTTP off loopback is refused with a
	// *runlet.ProviderError wrapping runlet.ErrInvalidRequest. Its
	// SecretHeaders (the user's own headers) are credentials too, redacted
	// from errors like those in Header.
	Policy safehttp.Policy
	// ErrorHeader, when set, completes the error of a non-2xx response
	// from its headers, for APIs that name the error there rather than in
	// the body (AWS's X-Amzn-ErrorType).
	ErrorHeader func(h http.Header, e *runlet.ProviderError)

	once    sync.Once
	guarded *http.Client // HTTP under Policy, made on first use
	tokens  tokens       // the last tokens Token returned, for Redact
}

// NewClient returns a Client for one adapter: header is sent with every
// request; the names in user (the user's own headers, from the adapter's
// Config) are treated as credentials; allowInsecure and optOut set the
// policy on plain HTTP (see Policy).
func NewClient(provider string, hc *http.Client, retries int, header http.Header, user http.Header, allowInsecure bool) *Client {
	names := make([]string, 0, len(user))
	for k := range user {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	return &Client{Provider: provider, HTTP: hc, MaxRetries: retries, Header: header,
		Policy: safehttp.Policy{SecretHeaders: names, AllowInsecureHTTP: allowInsecure, OptOut: OptOut}}
}

// OptOut names, in errors, how an adapter's user allows credentials over
// plain HTTP.
const OptOut = "Config.AllowInsecureHTTP (allow_insecure_http in a config file's model section)"

// httpClient is HTTP (or http.DefaultClient) under Policy. It is made once:
// the caller's *http.Client is copied, never changed.
func (c *Client) httpClient() *http.Client {
	c.once.Do(func() { c.guarded = c.Policy.Client(c.HTTP) })
	return c.guarded
}

// Call is one request of an adapter: where it goes, its encoded JSON body,
// and headers for this request only (added to Client.Header).
type Call struct {
	URL    string
	Body   []byte
	Header http.Header
	// Model is the model the request names. A response whose provider
	// reported none gets it as ModelResponse.Model, so runs count and
	// price the call under the model asked for.
	Model string
}

// Post sends body to url and returns a 2xx response, whose body the caller
// must close, retrying retryable failures (see Retry). Any other outcome is
// an error: *runlet.ProviderError for HTTP and connection failures, or the
// context's error.
func (c *Client) Post(ctx context.Context, url string, body []byte) (*http.Response, error) {
	var resp *http.Response
	err := c.Retry(ctx, func() (bool, error) {
		var err error
		resp, err = c.PostOnce(ctx, url, body)
		return false, err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Retry runs attempt until it succeeds, fails for good (anything but a
// retryable *runlet.ProviderError), reports that it already handed
// something to the caller (yielded), or MaxRetries retries are spent. It
// waits between attempts with exponential backoff and jitter, or exactly
// the server's Retry-After; ctx cancels the wait. When the wait would
// outlast MaxRetryWait or ctx's deadline, it returns the attempt's error
// (with its RetryAfter) at once instead: never a retry sooner than the
// server asked, never a bare deadline error in place of the server's.
//
// A streaming adapter wraps "post and read until the first delta" in one
// attempt, so a stream that fails before the caller saw anything is retried
// like a failed request, and one that fails later is not.
func (c *Client) Retry(ctx context.Context, attempt func() (yielded bool, err error)) error {
	for n := 0; ; n++ {
		yielded, err := attempt()
		if err == nil || yielded || n >= c.MaxRetries {
			return err
		}
		var perr *runlet.ProviderError
		if !errors.As(err, &perr) || !perr.Retryable {
			return err
		}
		wait, ok := c.wait(ctx, n, perr.RetryAfter)
		if !ok {
			return err
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// RetryStream runs one streaming exchange (once) under Retry. once sends
// its events through emit, which forwards them to yield and notes that
// something reached the caller, after which a failure is no longer retried.
// It returns the final error, or nil when the stream completed or the caller
// stopped ranging; the adapter yields the error itself (after redacting it).
func (c *Client) RetryStream(ctx context.Context, yield func(runlet.StreamEvent, error) bool, once func(emit func(runlet.StreamEvent) bool) error) error {
	yielded, stopped := false, false
	emit := func(ev runlet.StreamEvent) bool {
		yielded = true
		if !yield(ev, nil) {
			stopped = true
		}
		return !stopped
	}
	err := c.Retry(ctx, func() (bool, error) {
		err := once(emit)
		return yielded, err
	})
	if stopped {
		return nil
	}
	return err
}

// PostOnce sends body to url once and returns a 2xx response, whose body
// the caller must close. Any other outcome is an error:
// *runlet.ProviderError for HTTP and connection failures (Retryable set when
// a retry may help), or the context's error.
func (c *Client) PostOnce(ctx context.Context, url string, body []byte) (*http.Response, error) {
	return c.do(ctx, Call{URL: url, Body: body})
}

// contentTypeJSON is every request's Content-Type value, shared (as
// Header.Set would allocate it per request); nothing modifies it.
var contentTypeJSON = []string{"application/json"}

func (c *Client) do(ctx context.Context, call Call) (*http.Response, error) {
	hc := c.httpClient()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, call.URL, bytes.NewReader(call.Body))
	if err != nil {
		return nil, &runlet.ProviderError{Provider: c.Provider, Message: "building request", Err: scrub(err)}
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	for k, v := range call.Header {
		req.Header[k] = v
	}
	req.Header["Content-Type"] = contentTypeJSON
	if err := c.authorize(ctx, req); err != nil {
		return nil, err
	}
	if err := c.Policy.Check(req); err != nil {
		return nil, c.insecure(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if insecure := refused(err); insecure != nil {
			return nil, c.insecure(insecure)
		}
		if own := classified(err); own != nil {
			// The RoundTripper's own verdict (a replayer's recording has
			// ended, say): no connection was tried, so none failed.
			return nil, &runlet.ProviderError{Provider: c.Provider, Retryable: own.Retryable(), Err: own}
		}
		return nil, &runlet.ProviderError{Provider: c.Provider, Message: "connection failed", Retryable: true, Err: scrub(err)}
	}
	if err := decompress(resp); err != nil {
		resp.Body.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := &runlet.ProviderError{Provider: c.Provider, StatusCode: resp.StatusCode, Message: "reading gzip response",
			RequestID: RequestID(resp.Header), Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			e.Retryable, e.Err = true, fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, err)
		}
		return nil, e
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := ErrorFromResponse(c.Provider, resp)
		if c.ErrorHeader != nil {
			c.ErrorHeader(resp.Header, e)
		}
		return nil, e
	}
	return resp, nil
}

// insecure is the error of a request the Policy refused: final, a
// *runlet.ProviderError wrapping runlet.ErrInvalidRequest, whose message
// is err's (it names the opt-out).
func (c *Client) insecure(err error) error {
	return &runlet.ProviderError{Provider: c.Provider, Message: err.Error(), Err: runlet.ErrInvalidRequest}
}

// refused returns the policy's refusal of a redirect inside err, or nil.
func refused(err error) error {
	var insecure *safehttp.InsecureError
	if errors.As(err, &insecure) {
		return insecure
	}
	return nil
}

// wait is the pause before retry number attempt+1: the server's
// Retry-After, else backoff. ok is false when that pause is longer than
// MaxRetryWait or than what is left before ctx's deadline.
func (c *Client) wait(ctx context.Context, attempt int, retryAfter time.Duration) (d time.Duration, ok bool) {
	limit := c.MaxRetryWait
	if limit <= 0 {
		limit = DefaultMaxRetryWait
	}
	d = retryAfter
	if d <= 0 {
		d = c.backoff(attempt)
	}
	if d > limit {
		return 0, false
	}
	if dl, has := ctx.Deadline(); has && time.Until(dl) < d {
		return 0, false
	}
	return d, true
}

func (c *Client) backoff(attempt int) time.Duration {
	lo, hi := c.MinBackoff, c.MaxBackoff
	if lo <= 0 {
		lo = defaultMinBackoff
	}
	if hi <= 0 {
		hi = defaultMaxBackoff
	}
	d := lo << min(attempt, 16)
	if d > hi || d <= 0 {
		d = hi
	}
	// Jitter: a random point in [d/2, d].
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// classified returns the error inside a transport failure that says
// itself whether a retry may help, with a Retryable() bool method (a
// replaying RoundTripper's mismatch, say), or nil. Other transport
// failures are connection errors, worth retrying.
func classified(err error) interface {
	error
	Retryable() bool
} {
	var own interface {
		error
		Retryable() bool
	}
	if errors.As(err, &own) {
		return own
	}
	return nil
}
