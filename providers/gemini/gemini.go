package gemini

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

// Model is a runlet.Model backed by the Gemini API's generateContent and
// streamGenerateContent methods. It is safe for concurrent use.
type Model struct {
	cfg resolved
}

var _ runlet.Model = (*Model)(nil)

// New returns a Gemini adapter. The API key defaults to $GEMINI_API_KEY,
// then $GOOGLE_API_KEY, read once, here.
func New(cfg Config) *Model {
	return &Model{cfg: cfg.resolve()}
}

// Name returns the adapter's name (Config.Name, default "gemini").
func (m *Model) Name() string { return m.cfg.name }

// ErrMalformedStream (the same value as runlet.ErrMalformedStream) is
// wrapped by the *runlet.ProviderError returned for a response or stream
// event that is not what the Gemini API sends.
var ErrMalformedStream = runlet.ErrMalformedStream

// maxResponseBody bounds a non-streaming response body.
const maxResponseBody = 64 << 20

// Generate calls generateContent and returns the whole response.
func (m *Model) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	url, body, err := m.buildRequest(req, false)
	if err != nil {
		return nil, m.redact(err)
	}
	var out *runlet.ModelResponse
	err = m.cfg.client.Retry(ctx, func() (bool, error) {
		resp, err := m.cfg.client.PostOnce(ctx, url, body)
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

// Stream calls streamGenerateContent?alt=sse and yields text, thought and
// function-call deltas as they arrive, then one runlet.StreamDone event
// with the assembled response. A stream that fails before its first delta
// is retried like a failed request; after that the error is yielded.
func (m *Model) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		url, body, err := m.buildRequest(req, true)
		if err != nil {
			yield(runlet.StreamEvent{}, m.redact(err))
			return
		}
		err = m.cfg.client.RetryStream(ctx, yield, func(emit func(runlet.StreamEvent) bool) error {
			resp, err := m.cfg.client.PostOnce(ctx, url, body)
			if err != nil {
				return err
			}
			if !isEventStream(resp.Header) {
				// A gateway that answers with the whole response.
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

// readResponse decodes a generateContent response.
func (m *Model) readResponse(ctx context.Context, resp *http.Response) (*runlet.ModelResponse, error) {
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
	a := assembler{name: m.cfg.name}
	if err := a.add(&w, nil); err != nil {
		return nil, err
	}
	return a.response()
}

// readStream decodes an event stream, calling emit for each delta and
// finally for StreamDone. The API has no terminal event: a stream is
// complete when it ends after a chunk with a finish reason (or a blocked
// prompt). A consumer that stops (emit returns false) ends it without
// error.
func (m *Model) readStream(ctx context.Context, body io.ReadCloser, emit func(runlet.StreamEvent) bool) error {
	defer body.Close()
	r := sse.NewReader(body)
	a := assembler{name: m.cfg.name}
	stopped := false
	send := func(ev runlet.StreamEvent) {
		if !stopped && !emit(ev) {
			stopped = true
		}
	}
	var chunk wireResponse
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return &runlet.ProviderError{Provider: m.cfg.name, Message: "stream event too large", Err: fmt.Errorf("%w: %w", ErrMalformedStream, err)}
			}
			if !errors.Is(err, io.EOF) || !a.finished {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				return m.incomplete(err)
			}
			resp, err := a.response()
			if err != nil {
				return err
			}
			emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: resp})
			return nil
		}
		data := strings.TrimSpace(string(ev.Data))
		if data == "" || data == "[DONE]" {
			continue
		}
		chunk = wireResponse{}
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			if _, next := r.Next(); errors.Is(next, io.EOF) {
				// The last event is broken: the stream was cut off mid-event.
				return m.incomplete(fmt.Errorf("%w: %w", ErrMalformedStream, err))
			}
			return &runlet.ProviderError{Provider: m.cfg.name, Message: "malformed stream event", Err: fmt.Errorf("%w: %w", ErrMalformedStream, err)}
		}
		if err := a.add(&chunk, send); err != nil {
			return err
		}
		if stopped {
			return nil
		}
	}
}

// incomplete is the error for a stream that ended before a finish reason.
func (m *Model) incomplete(cause error) *runlet.ProviderError {
	err := runlet.ErrStreamIncomplete
	if cause != nil {
		err = fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, cause)
	}
	return &runlet.ProviderError{Provider: m.cfg.name, Message: "stream ended before a finish reason", Retryable: true, Err: err}
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(strings.TrimSpace(h.Get("Content-Type")), "text/event-stream")
}

// emitResponse streams a whole response as one delta per part, then
// StreamDone.
func emitResponse(resp *runlet.ModelResponse, emit func(runlet.StreamEvent) bool) {
	// TODO(gemini): use httpc.EmitResponse once the shared call skeleton lands.
	calls := 0
	for _, p := range resp.Message.Parts {
		var ev runlet.StreamEvent
		switch p := p.(type) {
		case runlet.TextPart:
			ev = runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: p.Text}
		case runlet.ReasoningPart:
			ev = runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: p.Text}
		case runlet.ToolCallPart:
			ev = runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: calls, ID: p.ID, Name: p.Name, Delta: string(p.Arguments)}
			calls++
		}
		if ev.Kind != 0 && (ev.Delta != "" || ev.Kind == runlet.StreamToolCallDelta) && !emit(ev) {
			return
		}
	}
	emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: resp})
}

// redact masks the API key in an error's message.
func (m *Model) redact(err error) error {
	var pe *runlet.ProviderError
	if len(m.cfg.key) >= 4 && errors.As(err, &pe) {
		pe.Message = strings.ReplaceAll(pe.Message, m.cfg.key, "[REDACTED]")
	}
	return err
}
