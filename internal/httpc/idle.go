package httpc

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/runlet/runlet"
)

// DefaultStreamIdleTimeout is how long a stream may go without a byte from
// the server, its response headers included, when an adapter's Config sets
// no StreamIdleTimeout: far longer than any pause of a working server
// (servers that think for long send keep-alive events), short enough that
// a server that stops sending does not hold a run for ever.
const DefaultStreamIdleTimeout = 10 * time.Minute

// WithStreamIdle sets StreamIdle and returns c.
func (c *Client) WithStreamIdle(d time.Duration) *Client {
	c.StreamIdle = d
	return c
}

// errIdle is the cause a stream's request is cancelled with when it idles.
var errIdle = errors.New("httpc: stream idle")

// idleWatch cancels a streaming request that receives no byte for d: it
// wraps the response body, and every read that returns bytes restarts its
// timer.
type idleWatch struct {
	d      time.Duration
	timer  *time.Timer
	ctx    context.Context
	cancel context.CancelCauseFunc
	body   io.ReadCloser
}

// watchIdle returns the context to send a stream's request with and its
// watch, nil when the client has no idle timeout (StreamIdle negative).
func (c *Client) watchIdle(ctx context.Context) (context.Context, *idleWatch) {
	d := c.StreamIdle
	switch {
	case d < 0:
		return ctx, nil
	case d == 0:
		d = DefaultStreamIdleTimeout
	}
	w := &idleWatch{d: d}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	w.timer = time.AfterFunc(d, w.fire)
	return w.ctx, w
}

func (w *idleWatch) fire() { w.cancel(errIdle) }

// stop releases the timer and the context.
func (w *idleWatch) stop() {
	if w != nil {
		w.timer.Stop()
		w.cancel(nil)
	}
}

// wrap makes the response body restart the timer as bytes arrive.
func (w *idleWatch) wrap(body io.ReadCloser) io.ReadCloser {
	if w == nil {
		return body
	}
	w.body = body
	return w
}

func (w *idleWatch) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 {
		w.timer.Reset(w.d)
	}
	return n, err
}

func (w *idleWatch) Close() error { return w.body.Close() }

// err replaces err, when the watch cancelled the request, with a
// retryable *runlet.ProviderError that says so: retried if no event
// reached the caller yet, final otherwise (see RetryStream).
func (w *idleWatch) err(provider string, err error) error {
	if w == nil || err == nil || context.Cause(w.ctx) != errIdle {
		return err
	}
	return &runlet.ProviderError{Provider: provider, Retryable: true,
		Message: "no data from the server for " + w.d.String() + " (raise the adapter's Config.StreamIdleTimeout if it is slow to answer)",
		Err:     runlet.ErrStreamIncomplete}
}
