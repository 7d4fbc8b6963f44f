// Package httpc is the HTTP layer shared by the provider adapters: one POST
// with bounded retries, exponential backoff with jitter, Retry-After, and
// error bodies mapped to *runlet.ProviderError.
//
// A request is retried only before its response is handed to the caller, so
// stream bytes that reached the caller are never replayed.
package httpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet"
)

// Defaults for Client.
const (
	DefaultMaxRetries = 2
	defaultMinBackoff = 500 * time.Millisecond
	defaultMaxBackoff = 8 * time.Second
	maxRetryAfter     = 60 * time.Second
	maxErrorBody      = 64 << 10
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
// waits between attempts with exponential backoff and jitter, or the
// server's Retry-After when that is reasonable; ctx cancels the wait.
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
		if err := sleep(ctx, c.backoff(n, perr.RetryAfter)); err != nil {
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
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &runlet.ProviderError{Provider: c.Provider, Message: "building request", Err: err}
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &runlet.ProviderError{Provider: c.Provider, Message: "connection failed", Retryable: retryableTransportError(err), Err: scrub(err)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, ErrorFromResponse(c.Provider, resp)
	}
	return resp, nil
}

func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 && retryAfter <= maxRetryAfter {
		return retryAfter
	}
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

// retryableTransportError reports whether a transport failure is worth
// retrying: connection errors are, unless the error says otherwise with a
// Retryable() bool method (a replaying RoundTripper's mismatch, say).
func retryableTransportError(err error) bool {
	var r interface{ Retryable() bool }
	if errors.As(err, &r) {
		return r.Retryable()
	}
	return true
}

// Retryable reports whether an HTTP status is worth retrying: 408, 409, 429
// and every 5xx (Anthropic's 529 overloaded included).
func Retryable(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500
}

// ErrorFromResponse reads (at most 64 KiB of) an error response, closes it
// and maps it to a *runlet.ProviderError. It understands the OpenAI envelope
// {"error":{"message","type","code"}} and the Anthropic one
// {"type":"error","error":{"type","message"}}; any other body (an HTML page
// from a proxy, say) becomes a short plain-text message.
func ErrorFromResponse(provider string, resp *http.Response) *runlet.ProviderError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := ErrorFromBody(provider, body)
	e.StatusCode = resp.StatusCode
	e.Retryable = Retryable(resp.StatusCode) || e.Retryable
	if e.Code == "insufficient_quota" || e.Type == "insufficient_quota" {
		e.Retryable = false // a 429 that waiting does not cure: the account is out of credit
	}
	if d := RetryAfter(resp.Header); d > 0 || e.RetryAfter == 0 {
		e.RetryAfter = d // else keep the body's delay (google.rpc.RetryInfo)
	}
	e.RequestID = firstHeader(resp.Header, "X-Request-Id", "Request-Id")
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// ErrorFromBody maps an error payload, from an HTTP body or an error event
// inside a stream, to a *runlet.ProviderError (StatusCode left zero).
// Besides the OpenAI and Anthropic envelopes it reads Google's
// google.rpc.Status {"error":{"code","message","status","details"}}, also
// wrapped in a one-element array: status becomes Code, and a
// google.rpc.RetryInfo detail's retryDelay becomes RetryAfter.
func ErrorFromBody(provider string, body []byte) *runlet.ProviderError {
	e := &runlet.ProviderError{Provider: provider}
	body = unwrapArray(body)
	var env struct {
		Type    string          `json:"type"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && (len(env.Error) > 0 || env.Message != "") {
		var inner struct {
			Message string            `json:"message"`
			Type    string            `json:"type"`
			Code    json.RawMessage   `json:"code"`
			Status  string            `json:"status"`  // google.rpc.Status
			Details []json.RawMessage `json:"details"` // google.rpc.Status
		}
		if len(env.Error) > 0 && env.Error[0] == '{' && json.Unmarshal(env.Error, &inner) == nil {
			e.Message, e.Type, e.Code = inner.Message, inner.Type, rawString(inner.Code)
			if inner.Status != "" {
				e.Code = inner.Status
				e.Retryable = googleRetryable(inner.Status)
				e.RetryAfter = googleRetryDelay(inner.Details)
			}
		} else if len(env.Error) > 0 && env.Error[0] == '"' {
			_ = json.Unmarshal(env.Error, &e.Message)
		}
		if e.Message == "" {
			e.Message = env.Message
		}
		if e.Type == "" && env.Type != "error" {
			e.Type = env.Type
		}
		switch e.Type {
		case "overloaded_error", "rate_limit_error", "api_error", "server_error":
			e.Retryable = true
		}
		return e
	}
	e.Message = plainText(body)
	return e
}

func rawString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw) // a numeric code
}

// plainText shortens a non-JSON body to one readable line without markup.
func plainText(body []byte) string {
	var b strings.Builder
	inTag := false
	space := false
	for _, r := range string(body) {
		switch {
		case r == '<':
			inTag = true
		case r == '>' && inTag:
			inTag = false
			space = true
		case inTag:
		case r == '\n' || r == '\r' || r == '\t' || r == ' ':
			space = true
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
		if b.Len() >= 200 {
			b.WriteString("…")
			break
		}
	}
	return b.String()
}

// RetryAfter reads retry-after-ms, then Retry-After (seconds or HTTP date).
func RetryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func firstHeader(h http.Header, keys ...string) string {
	for _, k := range keys {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// scrub rewrites transport errors without the URL's query and user info,
// in case a user-supplied base URL carries a credential there.
func scrub(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	where := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		where = u.String()
	}
	return &url.Error{Op: ue.Op, URL: where, Err: ue.Err}
}

// ErrBodyTooLarge is returned by ReadBody for a body over its limit.
var ErrBodyTooLarge = errors.New("response body too large")

// ReadBody reads a whole response body of at most limit bytes. When the
// server declared the length it reads into one buffer of that size, instead
// of growing one as io.ReadAll does.
func ReadBody(resp *http.Response, limit int64) ([]byte, error) {
	if n := resp.ContentLength; n > limit {
		return nil, ErrBodyTooLarge
	} else if n > 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err == nil && int64(len(body)) > limit {
		return nil, ErrBodyTooLarge
	}
	return body, err
}
