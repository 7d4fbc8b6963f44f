package runlet

import "context"

// Preparer shapes the request before every model call, before the
// BeforeModelCall hooks: windowing, token budgets, summaries. It may replace
// req.Messages (and other fields) but must not modify the Message values it
// received, which the run still holds. Preparers that drop messages drop
// whole turns from the front, so a tool call is never separated from its
// result. NotePrepared reports what a preparer changed.
type Preparer interface {
	Prepare(ctx context.Context, req *ModelRequest) error
}

// PreparerFunc adapts a function to a Preparer.
type PreparerFunc func(ctx context.Context, req *ModelRequest) error

// Prepare calls f.
func (f PreparerFunc) Prepare(ctx context.Context, req *ModelRequest) error { return f(ctx, req) }

// turnStarts returns the indexes at which turns begin: every user message
// that is not a tool result. Cutting history at one of them never separates
// a tool call from its result.
func turnStarts(msgs []Message) []int {
	var starts []int
	for i, m := range msgs {
		if m.Role == RoleUser {
			starts = append(starts, i)
		}
	}
	return starts
}
