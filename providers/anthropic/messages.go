package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/sse"
)

// Messages is a runlet.Model backed by the Anthropic Messages API
// (POST {base}/v1/messages). It is safe for concurrent use.
type Messages struct {
	cfg resolved
	// backoff bounds between retries; tests shorten them.
	minBackoff, maxBackoff time.Duration
}

var _ runlet.Model = (*Messages)(nil)

// NewMessages returns a Messages adapter. The API key and base URL default
// to $ANTHROPIC_API_KEY and $ANTHROPIC_BASE_URL, read once, here.
func NewMessages(cfg Config) *Messages {
	r := cfg.resolve()
	return &Messages{cfg: r, minBackoff: 500 * time.Millisecond, maxBackoff: 8 * time.Second}
}

// Name returns the adapter's name (Config.Name, default "anthropic").
func (m *Messages) Name() string { return m.cfg.name }

// Generate sends the request and returns the whole response.
func (m *Messages) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	b, err := m.buildRequest(req, false)
	if err != nil {
		return nil, err
	}
	var out *runlet.ModelResponse
	err = m.retry(ctx, func() (bool, error) {
		resp, err := m.post(ctx, b)
		if err != nil {
			return false, err
		}
		out, err = m.readResponse(ctx, resp)
		return false, err
	})
	return out, err
}

// Stream sends the request with "stream": true and yields text, reasoning
// and tool-call deltas as they arrive, then one runlet.StreamDone event with
// the assembled response. A stream that fails before its first delta is
// retried like a failed request; after that the error is yielded.
func (m *Messages) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		b, err := m.buildRequest(req, true)
		if err != nil {
			yield(runlet.StreamEvent{}, err)
			return
		}
		stopped := false
		err = m.retry(ctx, func() (bool, error) {
			resp, err := m.post(ctx, b)
			if err != nil {
				return false, err
			}
			yielded, err := m.readStream(ctx, resp.Body, func(ev runlet.StreamEvent) bool {
				if !yield(ev, nil) {
					stopped = true
					return false
				}
				return true
			})
			return yielded, err
		})
		if err != nil && !stopped {
			yield(runlet.StreamEvent{}, err)
		}
	}
}

// post sends one request (the retry loop is m.retry's).
func (m *Messages) post(ctx context.Context, b built) (*http.Response, error) {
	client := m.cfg.client
	if b.betas != "" {
		c := *client
		c.Header = client.Header.Clone()
		c.Header.Set("Anthropic-Beta", joinBetas(c.Header.Values("Anthropic-Beta"), []string{b.betas}))
		client = &c
	}
	return client.Post(ctx, m.cfg.url, b.body)
}

// retry runs attempt until it succeeds, fails for good, has yielded
// something to the caller, or the retry budget (Config.MaxRetries) is spent.
// Retryable failures are *runlet.ProviderError with Retryable set.
func (m *Messages) retry(ctx context.Context, attempt func() (yielded bool, err error)) error {
	for n := 0; ; n++ {
		yielded, err := attempt()
		if err == nil || yielded || n >= m.cfg.retries {
			return err
		}
		var perr *runlet.ProviderError
		if !errors.As(err, &perr) || !perr.Retryable {
			return err
		}
		if err := sleep(ctx, m.backoff(n, perr.RetryAfter)); err != nil {
			return err
		}
	}
}

const maxRetryAfter = 60 * time.Second

// backoff is exponential with jitter, or the server's Retry-After when it
// is reasonable.
func (m *Messages) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 && retryAfter <= maxRetryAfter {
		return retryAfter
	}
	d := m.minBackoff << min(attempt, 16)
	if d > m.maxBackoff || d <= 0 {
		d = m.maxBackoff
	}
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

// readResponse decodes a non-streaming response.
func (m *Messages) readResponse(ctx context.Context, resp *http.Response) (*runlet.ModelResponse, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &runlet.ProviderError{Provider: m.cfg.name, StatusCode: resp.StatusCode, Message: "reading response", Retryable: true, Err: err}
	}
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		e := httpc.ErrorFromBody(m.cfg.name, body) // a proxy's page, say: show what it said
		e.StatusCode, e.Err = resp.StatusCode, err
		e.Message = "malformed response: " + e.Message
		return nil, e
	}
	if w.Type == "error" {
		e := httpc.ErrorFromBody(m.cfg.name, body)
		e.StatusCode = resp.StatusCode
		return nil, e
	}
	return m.toResponse(&w), nil
}

// readStream decodes an event stream, calling emit for each delta and
// finally for StreamDone. It reports whether anything was emitted; a
// consumer that stops (emit returns false) ends it without error.
func (m *Messages) readStream(ctx context.Context, body io.ReadCloser, emit func(runlet.StreamEvent) bool) (yielded bool, err error) {
	defer body.Close()
	r := sse.NewReader(body)
	d := newDecoder(m.cfg.name)
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return yielded, ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				return yielded, d.incomplete(nil)
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return yielded, &runlet.ProviderError{Provider: m.cfg.name, Message: "stream event too large", Err: err}
			}
			return yielded, d.incomplete(err)
		}
		out, ok, err := d.decode(ev.Type, ev.Data)
		if err != nil {
			return yielded, err
		}
		if ok {
			yielded = true
			if !emit(out) {
				return true, nil
			}
		}
		if d.done {
			emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: d.response()})
			return true, nil
		}
	}
}
