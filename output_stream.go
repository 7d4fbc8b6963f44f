package runlet

import (
	"context"
	"encoding/json"
	"iter"
)

// ObjectStream is a run streamed with StreamAs. Range Events or Partials
// (once, either one), then read Result.
type ObjectStream[T any] struct {
	events iter.Seq2[Event, error]
	out    *TypedResult[T]
	err    error
	done   bool
}

// StreamAs runs agent like Runtime.Stream, asking for an answer of type T
// as RunAs does, and lets the caller watch the answer form:
//
//	s := runlet.StreamAs[Invoice](ctx, rt, agent, text)
//	for inv := range s.Partials() {
//		render(inv) // more fields filled each time
//	}
//	res, err := s.Result()
//
// Partial values come from OutputPartial events (tolerant parsing of the
// JSON received so far); the final value is the validated one.
func StreamAs[T any](ctx context.Context, rt *Runtime, agent *Agent, input string, opts ...RunOption) *ObjectStream[T] {
	s := &ObjectStream[T]{out: new(TypedResult[T])}
	opts, err := typedOptions(agent, &s.out.Value, opts)
	if err != nil {
		s.err, s.done = err, true
		s.out.Result = &Result{Status: StateFailed}
		return s
	}
	s.events = rt.Stream(ctx, agent, input, opts...)
	return s
}

// Events yields every event of the run, as Runtime.Stream does.
func (s *ObjectStream[T]) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if s.done {
			return
		}
		s.done = true
		for ev, err := range s.events {
			switch e := ev.(type) {
			case *RunFinished:
				s.out.Result = e.Result
			case *RunFailed:
				s.out.Result, s.err = e.Result, err
			case *RunInterrupted:
				s.out.Result = e.Result
			}
			if !yield(ev, err) {
				if s.out.Result == nil {
					s.err = context.Canceled
				}
				return
			}
		}
	}
}

// Partials yields the answer as it forms: a fresh T decoded from each
// OutputPartial event, then the final, validated value when the run
// completes. A retry after an invalid answer starts again from an empty
// value. Errors are reported by Result.
func (s *ObjectStream[T]) Partials() iter.Seq[T] {
	return func(yield func(T) bool) {
		for ev := range s.Events() {
			switch e := ev.(type) {
			case *OutputPartial:
				if !yield(DecodePartial[T](e)) {
					return
				}
			case *RunFinished:
				yield(s.out.Value)
				return
			}
		}
	}
}

// Result returns the run's outcome, ranging the events first if nobody did.
func (s *ObjectStream[T]) Result() (*TypedResult[T], error) {
	for range s.Events() {
	}
	if s.out.Result == nil {
		s.out.Result = &Result{Status: StateFailed}
	}
	return s.out, s.err
}

// DecodePartial decodes the JSON of an OutputPartial event into a T, as far
// as it goes: members whose partial value does not fit T's field are left
// zero.
func DecodePartial[T any](ev *OutputPartial) T {
	var v T
	_ = json.Unmarshal(ev.JSON, &v) // a type mismatch leaves the field zero; the rest decodes
	return v
}
