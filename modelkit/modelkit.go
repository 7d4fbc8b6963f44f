// Package modelkit is the provider author's toolkit, as database/sql/driver
// is a driver author's: what a package implementing runlet.Model needs and
// an application using Runlet never sees.
//
// The contract itself stays in package runlet, because the user's API is
// built from it: runlet.Model (Generate and Stream), runlet.ModelRequest,
// runlet.ModelResponse, runlet.StreamEvent and its kinds, runlet.Usage,
// runlet.FinishReason, runlet.ToolSpec, the message parts, and
// *runlet.ProviderError for failures. This package holds the helpers for
// implementing it:
//
//   - Accumulator assembles stream deltas into the final ModelResponse that
//     a stream's StreamDone event carries.
//   - StreamResponse and Collect derive one of Model's methods from the
//     other: a provider without streaming yields its response as deltas; a
//     provider that only streams drains its stream.
//   - GenerateFunc and StreamFunc make a Model from one function, as
//     http.HandlerFunc makes a Handler: for small adapters and tests.
//
// Package modeltest (github.com/runlet/runlet/modelkit/modeltest) is the
// conformance suite a Model's test runs in one line.
package modelkit

import (
	"context"
	"iter"

	"github.com/runlet/runlet"
)

// StreamResponse yields resp as a stream: its text, reasoning and tool calls
// as single deltas, then one StreamDone event carrying resp.
func StreamResponse(resp *runlet.ModelResponse) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		idx := 0
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
				ev = runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: idx, ID: p.ID, Name: p.Name, Delta: string(p.Arguments)}
				idx++
			default:
				continue
			}
			if !yield(ev, nil) {
				return
			}
		}
		yield(runlet.StreamEvent{Kind: runlet.StreamDone, Response: resp}, nil)
	}
}

// Collect drains a stream and returns its final response. A stream that
// ends without StreamDone is a *runlet.ProviderError wrapping
// runlet.ErrStreamIncomplete.
func Collect(seq iter.Seq2[runlet.StreamEvent, error]) (*runlet.ModelResponse, error) {
	for ev, err := range seq {
		if err != nil {
			return nil, err
		}
		if ev.Kind == runlet.StreamDone {
			return ev.Response, nil
		}
	}
	return nil, &runlet.ProviderError{Message: "stream ended without a final response", Err: runlet.ErrStreamIncomplete}
}

// GenerateFunc is a runlet.Model made from a Generate function; its Stream
// yields the response with StreamResponse.
type GenerateFunc func(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error)

// Generate calls f.
func (f GenerateFunc) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	return f(ctx, req)
}

// Stream calls f and yields its response as a stream. Once ctx is done
// it stops with ctx's error, as every Model's stream does.
func (f GenerateFunc) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		resp, err := f(ctx, req)
		if err == nil && resp == nil {
			err = &runlet.ProviderError{Message: "model returned no response and no error"}
		}
		if err != nil {
			yield(runlet.StreamEvent{}, err)
			return
		}
		for ev, err := range StreamResponse(resp) {
			if cerr := ctx.Err(); cerr != nil {
				yield(runlet.StreamEvent{}, cerr)
				return
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// StreamFunc is a runlet.Model made from a Stream function; its Generate
// drains the stream with Collect.
type StreamFunc func(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error]

// Generate drains f's stream.
func (f StreamFunc) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	return Collect(f(ctx, req))
}

// Stream calls f.
func (f StreamFunc) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return f(ctx, req)
}
