package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/sse"
)

// Messages is a runlet.Model backed by the Anthropic Messages API
// (POST {base}/v1/messages). It is safe for concurrent use.
type Messages struct {
	cfg resolved
}

var _ runlet.Model = (*Messages)(nil)

// NewMessages returns a Messages adapter. The API key and base URL default
// to $ANTHROPIC_API_KEY and $ANTHROPIC_BASE_URL, read once, here.
func NewMessages(cfg Config) *Messages {
	r := cfg.resolve()
	return &Messages{cfg: r}
}

// Name returns the adapter's name (Config.Name, default "anthropic").
func (m *Messages) Name() string { return m.cfg.name }

// Generate sends the request and returns the whole response.
func (m *Messages) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	b, err := m.buildRequest(req, false)
	if err != nil {
		return nil, m.redact(err)
	}
	var out *runlet.ModelResponse
	err = m.cfg.client.Retry(ctx, func() (bool, error) {
		resp, err := m.post(ctx, b)
		if err != nil {
			return false, err
		}
		if isEventStream(resp.Header) {
			// A gateway that streams anyway: assemble the events.
			err = m.readStream(ctx, resp.Body, func(ev runlet.StreamEvent) bool {
				if ev.Kind == runlet.StreamDone {
					out = ev.Response
				}
				return true
			})
			return false, err
		}
		out, err = m.readResponse(ctx, resp)
		return false, err
	})
	if err != nil {
		return nil, m.redact(err)
	}
	return out, nil
}

// Stream sends the request with "stream": true and yields text, reasoning
// and tool-call deltas as they arrive, then one runlet.StreamDone event with
// the assembled response. A stream that fails before its first delta is
// retried like a failed request; after that the error is yielded.
func (m *Messages) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		b, err := m.buildRequest(req, true)
		if err != nil {
			yield(runlet.StreamEvent{}, m.redact(err))
			return
		}
		err = m.cfg.client.RetryStream(ctx, yield, func(emit func(runlet.StreamEvent) bool) error {
			resp, err := m.post(ctx, b)
			if err != nil {
				return err
			}
			if isJSON(resp.Header) {
				// A gateway that ignores "stream": answer with the whole message.
				out, err := m.readResponse(ctx, resp)
				if err != nil {
					return err
				}
				emitResponse(out, emit)
				return nil
			}
			return m.readStream(ctx, resp.Body, emit)
		})
		if err != nil {
			yield(runlet.StreamEvent{}, m.redact(err))
		}
	}
}

// post sends one request (the retry loop is the client's).
func (m *Messages) post(ctx context.Context, b built) (*http.Response, error) {
	client := m.cfg.client
	if b.betas != "" {
		c := *client
		c.Header = client.Header.Clone()
		c.Header.Set("Anthropic-Beta", joinBetas(c.Header.Values("Anthropic-Beta"), []string{b.betas}))
		client = &c
	}
	return client.PostOnce(ctx, m.cfg.url, b.body)
}

// ErrMalformedStream (the same value as runlet.ErrMalformedStream) is
// wrapped by the *runlet.ProviderError returned for
// a response or stream event that is not what the Messages API sends
// (invalid JSON, impossible values).
var ErrMalformedStream = runlet.ErrMalformedStream

// maxResponseBody bounds a non-streaming response body.
const maxResponseBody = 64 << 20

// readResponse decodes a non-streaming response.
func (m *Messages) readResponse(ctx context.Context, resp *http.Response) (*runlet.ModelResponse, error) {
	defer resp.Body.Close()
	body, err := httpc.ReadBody(resp, maxResponseBody)
	switch {
	case errors.Is(err, httpc.ErrBodyTooLarge):
		return nil, &runlet.ProviderError{Provider: m.cfg.name, StatusCode: resp.StatusCode, Message: "response body too large", Err: ErrMalformedStream}
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &runlet.ProviderError{Provider: m.cfg.name, StatusCode: resp.StatusCode, Message: "reading response", Retryable: true, Err: err}
	}
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		e := httpc.ErrorFromBody(m.cfg.name, body) // a proxy's page, say: show what it said
		e.StatusCode, e.Err = resp.StatusCode, fmt.Errorf("%w: %w", ErrMalformedStream, err)
		e.Message = "malformed response: " + e.Message
		e.Retryable = false
		return nil, e
	}
	if w.Type == "error" {
		e := httpc.ErrorFromBody(m.cfg.name, body)
		e.StatusCode = resp.StatusCode
		return nil, e
	}
	return m.toResponse(&w), nil
}

func isJSON(h http.Header) bool {
	return strings.HasPrefix(strings.TrimSpace(h.Get("Content-Type")), "application/json")
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(strings.TrimSpace(h.Get("Content-Type")), "text/event-stream")
}

// emitResponse streams a whole response as one delta per part, then
// StreamDone.
func emitResponse(resp *runlet.ModelResponse, emit func(runlet.StreamEvent) bool) {
	calls := 0
	for _, p := range resp.Message.Parts {
		var ev runlet.StreamEvent
		switch p := p.(type) {
		case runlet.TextPart:
			ev = runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: p.Text}
		case runlet.ReasoningPart:
			if p.Text == "" {
				continue
			}
			ev = runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: p.Text}
		case runlet.ToolCallPart:
			ev = runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: calls, ID: p.ID, Name: p.Name, Delta: string(p.Arguments)}
			calls++
		default:
			continue
		}
		if !emit(ev) {
			return
		}
	}
	emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: resp})
}

// readStream decodes an event stream, calling emit for each delta and
// finally for StreamDone. A consumer that stops (emit returns false) ends
// it without error.
func (m *Messages) readStream(ctx context.Context, body io.ReadCloser, emit func(runlet.StreamEvent) bool) error {
	defer body.Close()
	r := sse.NewReader(body)
	d := newDecoder(m.cfg.name)
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				return d.incomplete(nil)
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return &runlet.ProviderError{Provider: m.cfg.name, Message: "stream event too large", Err: fmt.Errorf("%w: %w", ErrMalformedStream, err)}
			}
			return d.incomplete(err)
		}
		out, ok, err := d.decode(ev.Type, ev.Data)
		if err != nil {
			if errors.Is(err, ErrMalformedStream) {
				if _, next := r.Next(); errors.Is(next, io.EOF) {
					// The last event is broken and message_stop never came:
					// the stream was cut off, most likely mid-event.
					var perr *runlet.ProviderError
					if errors.As(err, &perr) && perr.Err != nil {
						err = perr.Err
					}
					return d.incomplete(err)
				}
			}
			return err
		}
		if ok && !emit(out) {
			return nil
		}
		if d.done {
			emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: d.response()})
			return nil
		}
	}
}

// redact removes the API key from an error's text. Errors never carry
// request headers, but a misbehaving server or proxy may echo the key back
// in an error body or stream event.
func (m *Messages) redact(err error) error {
	key := m.cfg.client.Header.Get("X-Api-Key")
	var pe *runlet.ProviderError
	if len(key) < 4 || !errors.As(err, &pe) {
		return err
	}
	const mask = "[REDACTED]"
	pe.Message = strings.ReplaceAll(pe.Message, key, mask)
	pe.Code = strings.ReplaceAll(pe.Code, key, mask)
	pe.Type = strings.ReplaceAll(pe.Type, key, mask)
	pe.RequestID = strings.ReplaceAll(pe.RequestID, key, mask)
	if pe.Err != nil && strings.Contains(pe.Err.Error(), key) {
		pe.Err = &redactedError{msg: strings.ReplaceAll(pe.Err.Error(), key, mask), cause: pe.Err}
	}
	return err
}

// redactedError stands for an error whose text held the key. errors.Is and
// errors.As still reach the sentinels it wrapped.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

// Unwrap returns the sentinels (ErrStreamIncomplete, ErrMalformedStream,
// context errors) the original wrapped, not the original itself.
func (e *redactedError) Unwrap() []error {
	var out []error
	for _, s := range []error{runlet.ErrStreamIncomplete, ErrMalformedStream, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(e.cause, s) {
			out = append(out, s)
		}
	}
	return out
}
