package runlet_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
	"github.com/runlet/runlet/runlettest"
)

func TestFallback(t *testing.T) {
	overloaded := &runlet.ProviderError{Provider: "a", StatusCode: 529, Message: "overloaded", Retryable: true}
	t.Run("generate falls back on provider errors", func(t *testing.T) {
		a := runlettest.NewModel(runlettest.ErrorReply(overloaded))
		b := runlettest.NewModel(runlettest.TextReply("from b"))
		res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: runlet.Fallback(a, b)}, "hi")
		if err != nil || res.Output != "from b" {
			t.Fatalf("res=%+v err=%v", res, err)
		}
	})
	t.Run("all fail: every error is visible", func(t *testing.T) {
		other := &runlet.ProviderError{Provider: "b", StatusCode: 500, Message: "down"}
		a := runlettest.NewModel(runlettest.ErrorReply(overloaded))
		b := runlettest.NewModel(runlettest.ErrorReply(other))
		_, err := runlet.Fallback(a, b).Generate(context.Background(), &runlet.ModelRequest{})
		var pe *runlet.ProviderError
		if !errors.As(err, &pe) || !errors.Is(err, overloaded) || !errors.Is(err, other) || !strings.Contains(err.Error(), "after 1 earlier") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("cancellation does not fall back", func(t *testing.T) {
		a := runlettest.NewModel(runlettest.ErrorReply(context.Canceled))
		b := runlettest.NewModel(runlettest.TextReply("no"))
		_, err := runlet.Fallback(a, b).Generate(context.Background(), &runlet.ModelRequest{})
		if !errors.Is(err, context.Canceled) || len(b.Requests()) != 0 {
			t.Fatalf("err=%v b called %d times", err, len(b.Requests()))
		}
	})
	t.Run("stream falls back only before the first event", func(t *testing.T) {
		a := runlettest.NewModel(runlettest.ErrorReply(overloaded))
		b := runlettest.NewModel(runlettest.TextReply("streamed from b"))
		b.ChunkSize = 4
		var text strings.Builder
		for ev, err := range runlet.NewRuntime().Stream(context.Background(), &runlet.Agent{Model: runlet.Fallback(a, b)}, "hi") {
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := ev.(*runlet.TextDelta); ok {
				text.WriteString(d.Delta)
			}
		}
		if text.String() != "streamed from b" {
			t.Fatalf("text %q", text.String())
		}
		// A stream that fails after yielding does not switch.
		midway := modelkit.StreamFunc(func(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
			return func(yield func(runlet.StreamEvent, error) bool) {
				if yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "par"}, nil) {
					yield(runlet.StreamEvent{}, overloaded)
				}
			}
		})
		c := runlettest.NewModel(runlettest.TextReply("never"))
		var got []string
		var last error
		for ev, err := range runlet.Fallback(midway, c).Stream(context.Background(), &runlet.ModelRequest{}) {
			got = append(got, ev.Delta)
			last = err
		}
		if !errors.Is(last, overloaded) || len(c.Requests()) != 0 || got[0] != "par" {
			t.Fatalf("got %v, err %v, c called %d", got, last, len(c.Requests()))
		}
	})
}
