// Package eventname gives the other modules of this repository (such as
// runlet/temporal, which makes events of its own) the stable type name of a
// runlet.Event, such as "run.started": the name the root package stamps in
// EventHeader.Type and UnmarshalEvent reads. The root package keeps it
// unexported, as the method that seals the set of events, and sets Of
// when it is initialised, so the names are written in one place only.
package eventname

// Of returns the type name of ev, a runlet.Event.
var Of func(ev any) string
