package httpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
)

// Generate runs one non-streaming call under Retry: it posts call and
// hands the 2xx response to decode, then closes its body. A decode failure
// that is a retryable *runlet.ProviderError (see ReadAll and DecodeError:
// a body cut halfway, a 200 body holding an overload error) is retried
// like a failed request. The error returned has gone through Redact.
func (c *Client) Generate(ctx context.Context, call Call, decode func(*http.Response) (*runlet.ModelResponse, error)) (*runlet.ModelResponse, error) {
	var out *runlet.ModelResponse
	err := c.Retry(ctx, func() (bool, error) {
		resp, err := c.do(ctx, call)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		out, err = decode(resp)
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err == nil && out != nil && out.Model == "" {
			out.Model = call.Model
		}
		return false, err
	})
	if err != nil {
		return nil, c.redactCall(call, err)
	}
	return out, nil
}

// Stream runs one streaming call under RetryStream: it posts call, hands
// the 2xx response to read, which emits the events of that response
// (returning nil once it emitted StreamDone or emit returned false), and
// closes the body. A stream that receives no byte for StreamIdle (its
// headers included) is cancelled with a retryable error wrapping
// runlet.ErrStreamIncomplete. Until an event reached the caller a failure is retried
// like a failed request; after that it is final. A final error goes
// through Redact and is yielded.
func (c *Client) Stream(ctx context.Context, call Call, yield func(runlet.StreamEvent, error) bool, read func(resp *http.Response, emit func(runlet.StreamEvent) bool) error) {
	err := c.RetryStream(ctx, yield, func(emit func(runlet.StreamEvent) bool) error {
		sctx, idle := c.watchIdle(ctx)
		defer idle.stop()
		resp, err := c.do(sctx, call)
		if err != nil {
			return idle.err(c.Provider, err)
		}
		resp.Body = idle.wrap(resp.Body)
		defer resp.Body.Close()
		if call.Model != "" {
			inner := emit
			emit = func(ev runlet.StreamEvent) bool {
				if ev.Kind == runlet.StreamDone && ev.Response != nil && ev.Response.Model == "" {
					ev.Response.Model = call.Model
				}
				return inner(ev)
			}
		}
		err = read(resp, emit)
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		return idle.err(c.Provider, err)
	})
	if err != nil {
		yield(runlet.StreamEvent{}, c.redactCall(call, err))
	}
}

// Failed is the stream of a call that failed before it was sent: err,
// redacted by the adapter if needed.
func Failed(err error) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) { yield(runlet.StreamEvent{}, err) }
}

// EmitResponse streams a whole response through emit, for a server that
// answered a streaming request in one piece: modelkit.StreamResponse (one
// delta per part, then StreamDone), stopping when emit returns false.
func EmitResponse(resp *runlet.ModelResponse, emit func(runlet.StreamEvent) bool) {
	for ev := range modelkit.StreamResponse(resp) {
		if !emit(ev) {
			return
		}
	}
}

// ReadAll reads a whole 2xx response body of at most limit bytes (the
// adapter's response size limit, see Budget; zero or negative means twice
// DefaultMaxResponseBytes, room for JSON's escaping). A body that breaks
// off (a connection cut halfway) is a retryable *runlet.ProviderError
// wrapping runlet.ErrStreamIncomplete; one over the limit wraps
// runlet.ErrResponseTooLarge.
func (c *Client) ReadAll(resp *http.Response, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = 2 * DefaultMaxResponseBytes
	}
	body, err := ReadBody(resp, limit)
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		return nil, &runlet.ProviderError{Provider: c.Provider, StatusCode: resp.StatusCode, Message: "response body too large",
			RequestID: RequestID(resp.Header), Err: runlet.ErrResponseTooLarge}
	case err != nil:
		return nil, &runlet.ProviderError{Provider: c.Provider, StatusCode: resp.StatusCode, Message: "reading response", Retryable: true,
			RequestID: RequestID(resp.Header), Err: fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, err)}
	}
	return body, nil
}

// DecodeError maps a failure to decode a 2xx response body. A body that
// ends in the middle of its JSON was cut off: a retryable
// *runlet.ProviderError wrapping runlet.ErrStreamIncomplete, as a stream
// cut off is. Anything else (a proxy's HTML page, garbage) wraps
// runlet.ErrMalformedStream, with a summary of what the body said, and is
// final.
func (c *Client) DecodeError(resp *http.Response, body []byte, err error) *runlet.ProviderError {
	e := &runlet.ProviderError{Provider: c.Provider, StatusCode: resp.StatusCode, RequestID: RequestID(resp.Header)}
	// encoding/json reports input that ends too early with this message.
	var syn *json.SyntaxError
	if errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && syn.Error() == "unexpected end of JSON input" && looksLikeJSON(body)) {
		e.Message, e.Retryable = "response body cut short", true
		e.Err = fmt.Errorf("%w: %w", runlet.ErrStreamIncomplete, err)
		return e
	}
	e.Message = "malformed response"
	if said := ErrorFromBody(c.Provider, body).Message; said != "" {
		e.Message += ": " + said
	}
	e.Err = fmt.Errorf("%w: %w", runlet.ErrMalformedStream, err)
	return e
}

func looksLikeJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// RequestError is the error of a request an adapter cannot build for its
// API (an option of the wrong type, a part the API does not take): a
// *runlet.ProviderError wrapping runlet.ErrInvalidRequest, not retryable,
// the same in every adapter. what says where ("option \"store\"", "message
// 2", or empty); err says why.
func RequestError(provider, what string, err error) *runlet.ProviderError {
	switch {
	case err == nil:
		return &runlet.ProviderError{Provider: provider, Message: what, Err: runlet.ErrInvalidRequest}
	case what != "":
		what += ": "
	}
	return &runlet.ProviderError{Provider: provider, Message: what + err.Error(), Err: fmt.Errorf("%w: %w", runlet.ErrInvalidRequest, err)}
}

// Assemble runs a stream reader and returns the response of its StreamDone
// event: for a server that streams a response asked for whole.
func Assemble(read func(emit func(runlet.StreamEvent) bool) error) (*runlet.ModelResponse, error) {
	var out *runlet.ModelResponse
	err := read(func(ev runlet.StreamEvent) bool {
		if ev.Kind == runlet.StreamDone {
			out = ev.Response
		}
		return true
	})
	return out, err
}
