package runlet_test

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// BenchmarkInputGuardrails measures what two input guardrails cost in wall
// time: a model with a fixed 4 ms latency, and two checks of 2 ms each
// that run beside it (the default), or before it (Blocking). Beside the
// model call they should add nothing to the run's time: max(check, model)
// is the model's.
func BenchmarkInputGuardrails(b *testing.B) {
	const modelLatency, checkLatency = 4 * time.Millisecond, 2 * time.Millisecond
	model := runlettest.NewModel()
	model.Func = func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		r := runlettest.TextReply("hello")
		r.Delay = modelLatency
		return r
	}
	check := func(name string, blocking bool) runlet.Guardrail {
		return runlet.Guardrail{Name: name, Blocking: blocking, Input: func(ctx context.Context, _ runlet.GuardrailInput) (runlet.GuardrailVerdict, error) {
			t := time.NewTimer(checkLatency)
			defer t.Stop()
			select {
			case <-t.C:
				return runlet.GuardrailVerdict{}, nil
			case <-ctx.Done():
				return runlet.GuardrailVerdict{}, ctx.Err()
			}
		}}
	}
	rt := runlet.NewRuntime()
	for _, bc := range []struct {
		name       string
		guardrails []runlet.Guardrail
	}{
		{"none", nil},
		{"two_beside", []runlet.Guardrail{check("a", false), check("b", false)}},
		{"two_blocking", []runlet.Guardrail{check("a", true), check("b", true)}},
	} {
		agent := &runlet.Agent{Model: model, Guardrails: bc.guardrails}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := rt.Run(context.Background(), agent, "hi"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
