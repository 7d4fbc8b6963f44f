package modelkit_test

import (
	"context"
	"iter"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
	"github.com/runlet/runlet/modelkit/modeltest"
)

// TestModelContract runs the Model conformance suite on the models made
// from one function: GenerateFunc (its Stream derived) and StreamFunc (its
// Generate derived, over a stream that honours its context).
func TestModelContract(t *testing.T) {
	t.Run("GenerateFunc", func(t *testing.T) {
		modeltest.RunScripted(t, func(t *testing.T, resp *runlet.ModelResponse) runlet.Model {
			return modelkit.GenerateFunc(func(context.Context, *runlet.ModelRequest) (*runlet.ModelResponse, error) {
				return resp, nil
			})
		})
	})
	t.Run("StreamFunc", func(t *testing.T) {
		modeltest.RunScripted(t, func(t *testing.T, resp *runlet.ModelResponse) runlet.Model {
			return modelkit.StreamFunc(func(ctx context.Context, _ *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
				return func(yield func(runlet.StreamEvent, error) bool) {
					for ev, err := range modelkit.StreamResponse(resp) {
						if ctx.Err() != nil {
							yield(runlet.StreamEvent{}, ctx.Err())
							return
						}
						if !yield(ev, err) {
							return
						}
					}
				}
			})
		})
	})
}
