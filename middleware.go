package runlet

import (
	"context"
	"errors"
	"iter"
	"strconv"
)

// Fallback returns a Model that tries models in order: when one fails with
// an error DefaultShouldFallback accepts, the next one gets the same
// request. It is Model middleware: it wraps Models and is a Model, as
// http.Handler middleware wraps handlers.
//
// A stream falls back only before its first event reached the caller;
// after that, its error is final, so the caller never sees two answers
// spliced together.
//
// The response is the answering model's own, Model and Usage included, so
// a run counts and prices each call under the model that answered
// (Result.UsageByModel, Result.CostByModel); a failed attempt returned no
// usage and counts nothing.
func Fallback(models ...Model) Model { return &fallback{models: models} }

// FallbackWhen is Fallback with its own policy: should decides whether an
// error moves on to the next model.
func FallbackWhen(should func(error) bool, models ...Model) Model {
	return &fallback{models: models, should: should}
}

type fallback struct {
	models []Model
	should func(error) bool // nil: DefaultShouldFallback
}

// DefaultShouldFallback is Fallback's policy. Every adapter reports its
// failures as *ProviderError with the same vocabulary, so the policy is the
// same whichever provider failed:
//
//	error                                          next model?
//	context.Canceled, context.DeadlineExceeded     no: it would fail there too
//	*ProviderError: 429, 5xx, 529, connection      yes, after the adapter's retries
//	*ProviderError: 400, 401, 403, 404             yes: another provider may take it
//	*ProviderError wrapping ErrInvalidRequest      yes: another adapter may build it
//	  (an option of the wrong type, a part the API does not take)
//	*ProviderError wrapping ErrStreamIncomplete,   yes, unless an event already
//	  ErrMalformedStream or ErrResponseTooLarge      reached the caller
//	any other error: a hook's or a tool's error,   no
//	  a usage limit, a custom Model's plain error
//
// A stream that already yielded an event never falls back (see Fallback).
// FallbackWhen takes another policy.
func DefaultShouldFallback(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *ProviderError
	return errors.As(err, &pe)
}

func (f *fallback) next(err error) bool {
	if f.should != nil {
		return f.should(err)
	}
	return DefaultShouldFallback(err)
}

// Generate implements Model.
func (f *fallback) Generate(ctx context.Context, req *ModelRequest) (*ModelResponse, error) {
	var errs []error
	for _, m := range f.models {
		resp, err := m.Generate(ctx, req)
		if err == nil {
			return resp, nil
		}
		errs = append(errs, err)
		if !f.next(err) {
			break
		}
	}
	return nil, fallbackError(errs)
}

// Stream implements Model.
func (f *fallback) Stream(ctx context.Context, req *ModelRequest) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		var errs []error
		for _, m := range f.models {
			started := false
			var failed error
			for ev, err := range m.Stream(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				started = true
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if started {
				yield(StreamEvent{}, failed)
				return
			}
			errs = append(errs, failed)
			if !f.next(failed) {
				break
			}
		}
		yield(StreamEvent{}, fallbackError(errs))
	}
}

// fallbackError returns the last error, joined with the earlier ones so
// errors.Is/As see every attempt.
func fallbackError(errs []error) error {
	switch len(errs) {
	case 0:
		return &ProviderError{Message: "fallback: no models"}
	case 1:
		return errs[0]
	}
	last := errs[len(errs)-1]
	return &fallbackErr{last: last, all: errs}
}

type fallbackErr struct {
	last error
	all  []error
}

func (e *fallbackErr) Error() string {
	return e.last.Error() + " (after " + strconv.Itoa(len(e.all)-1) + " earlier failed attempts)"
}

func (e *fallbackErr) Unwrap() []error { return e.all }
