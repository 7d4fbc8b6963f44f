package runlettest_test

import (
	"context"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit/modeltest"
	"github.com/runlet/runlet/runlettest"
)

// TestModelContract runs the Model conformance suite on the scripted Model,
// as it streams by default and in small chunks.
func TestModelContract(t *testing.T) {
	for _, chunk := range []int{0, 3} {
		modeltest.RunScripted(t, func(t *testing.T, resp *runlet.ModelResponse) runlet.Model {
			return &runlettest.Model{ChunkSize: chunk, Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
				return runlettest.Reply{Response: resp}
			}}
		})
	}
}
