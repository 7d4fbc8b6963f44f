package runlet_test

import (
	"context"
	"errors"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit/modeltest"
	"github.com/runlet/runlet/runlettest"
)

// TestFallbackModelContract runs the Model conformance suite on Fallback,
// answering from its first model and, after a failure, from its second.
func TestFallbackModelContract(t *testing.T) {
	answer := func(resp *runlet.ModelResponse) *runlettest.Model {
		return &runlettest.Model{ChunkSize: 3, Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
			return runlettest.Reply{Response: resp}
		}}
	}
	failing := &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		return runlettest.ErrorReply(&runlet.ProviderError{StatusCode: 503, Retryable: true, Err: errors.New("unavailable")})
	}}
	t.Run("first", func(t *testing.T) {
		modeltest.RunScripted(t, func(t *testing.T, resp *runlet.ModelResponse) runlet.Model {
			return runlet.Fallback(answer(resp), failing)
		})
	})
	t.Run("second", func(t *testing.T) {
		modeltest.RunScripted(t, func(t *testing.T, resp *runlet.ModelResponse) runlet.Model {
			return runlet.Fallback(failing, answer(resp))
		})
	})
}
