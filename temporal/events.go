package temporal

import (
	"context"
	"log/slog"

	"github.com/runlet/runlet"
)

// observe passes ev to every observer of the worker; a panicking observer
// is logged and skipped, as in Runlet.
func (d *Durable) observe(ctx context.Context, ev runlet.Event) {
	for _, o := range d.cfg.Observers {
		func() {
			defer func() {
				if v := recover(); v != nil {
					slog.Default().Error("runlet/temporal: observer panicked", "panic", v)
				}
			}()
			o.Observe(ctx, ev)
		}()
	}
}

// restamp labels an event made in an activity with the workflow's turn.
// Its Seq is 0: activity events come from other processes than the
// workflow's, so only the workflow's own events are numbered.
func restamp(ev runlet.Event, turn int) {
	if h := header(ev); h != nil {
		h.Turn, h.Seq = turn, 0
	}
}

// header returns a pointer to ev's header, for the event types the
// workflow and its activities emit.
func header(ev runlet.Event) *runlet.EventHeader {
	switch e := ev.(type) {
	case *runlet.RunStarted:
		return &e.EventHeader
	case *runlet.RunResumed:
		return &e.EventHeader
	case *runlet.StateChanged:
		return &e.EventHeader
	case *runlet.ContextPrepared:
		return &e.EventHeader
	case *runlet.ModelStarted:
		return &e.EventHeader
	case *runlet.TextDelta:
		return &e.EventHeader
	case *runlet.ReasoningDelta:
		return &e.EventHeader
	case *runlet.ToolCallDelta:
		return &e.EventHeader
	case *runlet.ModelFinished:
		return &e.EventHeader
	case *runlet.ToolStarted:
		return &e.EventHeader
	case *runlet.ToolFinished:
		return &e.EventHeader
	case *runlet.RunInterrupted:
		return &e.EventHeader
	case *runlet.RunFinished:
		return &e.EventHeader
	case *runlet.RunFailed:
		return &e.EventHeader
	}
	return nil
}
