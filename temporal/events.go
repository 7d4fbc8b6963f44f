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
	h := ev.Header()
	h.Turn, h.Seq = turn, 0
}

// header returns ev's header with its type name set, for the events the
// workflow and its activities make themselves; the names are Runlet's
// stable JSON "type" names (events_test.go checks them against
// runlet.UnmarshalEvent).
func header(ev runlet.Event) *runlet.EventHeader {
	h := ev.Header()
	switch ev.(type) {
	case *runlet.RunStarted:
		h.Type = "run.started"
	case *runlet.RunResumed:
		h.Type = "run.resumed"
	case *runlet.StateChanged:
		h.Type = "state.changed"
	case *runlet.ToolStarted:
		h.Type = "tool.started"
	case *runlet.ToolFinished:
		h.Type = "tool.finished"
	case *runlet.RunInterrupted:
		h.Type = "run.interrupted"
	case *runlet.RunFinished:
		h.Type = "run.finished"
	case *runlet.RunFailed:
		h.Type = "run.failed"
	}
	return h
}
