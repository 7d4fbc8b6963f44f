package anthropic

import (
	"context"
	"encoding/json"
	"errors"
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

// Generate sends the request and returns the whole response. A body that
// fails to read or decode in a way a retry may cure (cut halfway, or an
// overloaded error with status 200) is retried like a failed request.
func (m *Messages) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	b, err := m.buildRequest(req, false)
	if err != nil {
		return nil, err
	}
	return m.cfg.client.Generate(ctx, m.call(b), func(resp *http.Response) (*runlet.ModelResponse, error) {
		if !isEventStream(resp.Header) {
			return m.readResponse(resp)
		}
		// A gateway that streams anyway: assemble the events.
		return httpc.Assemble(func(emit func(runlet.StreamEvent) bool) error { return m.readStream(ctx, resp, emit) })
	})
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
		m.cfg.client.Stream(ctx, m.call(b), yield, func(resp *http.Response, emit func(runlet.StreamEvent) bool) error {
			if isJSON(resp.Header) {
				// A gateway that ignores "stream": answer with the whole message.
				out, err := m.readResponse(resp)
				if err != nil {
					return err
				}
				httpc.EmitResponse(out, emit)
				return nil
			}
			return m.readStream(ctx, resp, emit)
		})
	}
}

// call is the HTTP call for a built request, with its extra betas.
func (m *Messages) call(b built) httpc.Call {
	c := httpc.Call{URL: b.url, Body: b.body, Model: b.model}
	if b.betas != "" {
		c.Header = http.Header{"Anthropic-Beta": {joinBetas(m.cfg.client.Header.Values("Anthropic-Beta"), []string{b.betas})}}
	}
	return c
}

// readResponse decodes a non-streaming response.
func (m *Messages) readResponse(resp *http.Response) (*runlet.ModelResponse, error) {
	body, err := m.cfg.client.ReadAll(resp, 2*m.cfg.limit)
	if err != nil {
		return nil, err
	}
	// content[] blocks are 2 containers deep.
	if err := m.cfg.client.CheckBody(resp, body, 2, m.cfg.limit); err != nil {
		return nil, err
	}
	r := getResponseScan()
	defer r.release()
	w := &r.w
	if !r.scan(body) {
		w = new(wireResponse)
		if err := json.Unmarshal(body, w); err != nil {
			return nil, m.cfg.client.DecodeError(resp, body, err)
		}
	}
	if w.Type == "error" {
		e := httpc.ErrorFromBody(m.cfg.name, body)
		e.StatusCode, e.RequestID = resp.StatusCode, httpc.RequestID(resp.Header)
		return nil, e
	}
	return m.toResponse(w), nil
}

func isJSON(h http.Header) bool {
	return strings.HasPrefix(strings.TrimSpace(h.Get("Content-Type")), "application/json")
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(strings.TrimSpace(h.Get("Content-Type")), "text/event-stream")
}

// readStream decodes an event stream, calling emit for each delta and
// finally for StreamDone. A consumer that stops (emit returns false) ends
// it without error.
func (m *Messages) readStream(ctx context.Context, resp *http.Response, emit func(runlet.StreamEvent) bool) error {
	r := httpc.NewSSEReader(resp.Body, m.cfg.limit)
	defer r.Release()
	d := newDecoder(m.cfg.name, m.cfg.limit)
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
				return httpc.EventTooLarge(m.cfg.name, httpc.RequestID(resp.Header), m.cfg.limit, err)
			}
			return d.incomplete(err)
		}
		out, ok, err := d.decode(ev.Type, ev.Data)
		if err != nil {
			if errors.Is(err, runlet.ErrMalformedStream) {
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
		if err := d.tooLarge(); err != nil {
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
