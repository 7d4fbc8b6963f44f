package temporal

import (
	"context"
	"log/slog"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/eventname"
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
// workflow and its activities make themselves: Runlet's stable JSON "type"
// name, from Runlet itself.
func header(ev runlet.Event) *runlet.EventHeader {
	h := ev.Header()
	h.Type = eventname.Of(ev)
	return h
}
