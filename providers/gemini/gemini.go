package gemini

import (
	"bytes"
	"context"
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

// requestModel is the model a request built without error names: its
// "model" option, else Config.Model.
func (m *Model) requestModel(req *runlet.ModelRequest) string {
	if s, _ := req.Options[optModel].(string); s != "" {
		return s
	}
	return m.cfg.model
}

// Generate calls generateContent and returns the whole response. A body
// that fails to read or decode in a way a retry may cure (cut halfway) is
// retried like a failed request.
func (m *Model) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	url, body, err := m.buildRequest(req, false)
	if err != nil {
		return nil, err
	}
	return m.cfg.client.Generate(ctx, httpc.Call{URL: url, Body: body, Model: m.requestModel(req)}, func(resp *http.Response) (*runlet.ModelResponse, error) {
		if !isEventStream(resp.Header) {
			return m.readResponse(resp)
		}
		// A gateway that streams anyway: assemble the events.
		return httpc.Assemble(func(emit func(runlet.StreamEvent) bool) error { return m.readStream(ctx, resp, emit) })
	})
}

// Stream calls streamGenerateContent?alt=sse and yields text, thought and
// function-call deltas as they arrive, then one runlet.StreamDone event
// with the assembled response. A stream that fails before its first delta
// is retried like a failed request; after that the error is yielded.
func (m *Model) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	url, body, err := m.buildRequest(req, true)
	if err != nil {
		return httpc.Failed(err)
	}
	return func(yield func(runlet.StreamEvent, error) bool) {
		m.cfg.client.Stream(ctx, httpc.Call{URL: url, Body: body, Model: m.requestModel(req)}, yield, func(resp *http.Response, emit func(runlet.StreamEvent) bool) error {
			if !isEventStream(resp.Header) {
				// A gateway that answers with the whole response.
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

// readResponse decodes a generateContent response.
func (m *Model) readResponse(resp *http.Response) (*runlet.ModelResponse, error) {
	body, err := m.cfg.client.ReadAll(resp, 2*m.cfg.limit)
	if err != nil {
		return nil, err
	}
	// candidates[].content.parts[] are 5 containers deep.
	if err := m.cfg.client.CheckBody(resp, body, 5, m.cfg.limit); err != nil {
		return nil, err
	}
	c := getChunkScanner()
	defer c.release()
	w := &c.resp
	if err := c.decode(body, w); err != nil {
		return nil, m.cfg.client.DecodeError(resp, body, err)
	}
	a := m.newAssembler()
	if err := a.add(w, nil); err != nil {
		return nil, err
	}
	return a.response()
}

func (m *Model) newAssembler() assembler {
	return assembler{name: m.cfg.name, size: httpc.NewBudget(m.cfg.name, m.cfg.limit)}
}

// readStream decodes an event stream, calling emit for each delta and
// finally for StreamDone. The API has no terminal event: a stream is
// complete when it ends after a chunk with a finish reason (or a blocked
// prompt). A consumer that stops (emit returns false) ends it without
// error.
func (m *Model) readStream(ctx context.Context, resp *http.Response, emit func(runlet.StreamEvent) bool) error {
	r := httpc.NewSSEReader(resp.Body, m.cfg.limit)
	defer r.Release()
	a := m.newAssembler()
	stopped := false
	send := func(ev runlet.StreamEvent) {
		if !stopped && !emit(ev) {
			stopped = true
		}
	}
	var chunk wireResponse
	var cs chunkScanner
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return httpc.EventTooLarge(m.cfg.name, httpc.RequestID(resp.Header), m.cfg.limit, err)
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
		if data := bytes.TrimSpace(ev.Data); len(data) == 0 || string(data) == "[DONE]" {
			continue
		}
		// A chunk of many parts is refused before it is decoded.
		if err := a.size.CheckObjects(ev.Data, 5); err != nil {
			err.RequestID = httpc.RequestID(resp.Header)
			return err
		}
		if err := cs.decode(ev.Data, &chunk); err != nil {
			if _, next := r.Next(); errors.Is(next, io.EOF) {
				// The last event is broken: the stream was cut off mid-event.
				return m.incomplete(fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err))
			}
			return &runlet.ProviderError{Provider: m.cfg.name, Message: "malformed stream event", Err: fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)}
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
