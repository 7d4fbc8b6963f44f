package runlet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrMaxTurns: the run reached its turn limit before a final answer.
	ErrMaxTurns = errors.New("runlet: max turns reached")
	// ErrUsageLimit: the run crossed a usage limit (tokens, requests, tool calls).
	ErrUsageLimit = errors.New("runlet: usage limit reached")
	// ErrContextOverflow: even the newest turn does not fit the context budget.
	ErrContextOverflow = errors.New("runlet: context overflow")
	// ErrStreamIncomplete: a provider stream ended before its terminal event.
	ErrStreamIncomplete = errors.New("runlet: stream ended before completion")
	// ErrMalformedStream: a provider sent a response or stream event that
	// could not be decoded.
	ErrMalformedStream = errors.New("runlet: malformed response data")
	// ErrInvalidRequest: an adapter cannot build the request for its API (an
	// option of the wrong type, a part the API does not take). Every
	// adapter returns it wrapped in a *ProviderError (StatusCode 0, not
	// Retryable), before sending anything.
	ErrInvalidRequest = errors.New("runlet: request not valid for this provider")
	// ErrResponseTooLarge: a response grew past the adapter's size limit
	// (accumulated text, reasoning and tool arguments); wrapped in a
	// *ProviderError.
	ErrResponseTooLarge = errors.New("runlet: response too large")
	// ErrNoModel: the agent has no Model.
	ErrNoModel = errors.New("runlet: agent has no model")
	// ErrApprovalRequired is returned by a BeforeToolCall hook to interrupt
	// the run until a human decides on the call (see Runtime.Resume).
	ErrApprovalRequired = errors.New("runlet: approval required")
	// ErrConflict: a store write lost an optimistic-concurrency race.
	ErrConflict = errors.New("runlet: conflicting write")
	// ErrNotFound: a store has no such session or checkpoint.
	ErrNotFound = errors.New("runlet: not found")
	// ErrInvalidCheckpoint: Resume refused a checkpoint that does not
	// decode or is not consistent with the turn it interrupted (see
	// Checkpoint); nothing ran and the checkpoint is not consumed. Every
	// such error is a *CheckpointError.
	ErrInvalidCheckpoint = errors.New("runlet: invalid checkpoint")
	// ErrCheckpointMAC: a Runtime WithCheckpointKey found a checkpoint
	// whose MAC is missing or matches none of its keys: it was changed
	// outside the program, or written without the key or with another one.
	// It comes in a *CheckpointError and so also matches
	// ErrInvalidCheckpoint.
	ErrCheckpointMAC = errors.New("runlet: checkpoint MAC does not match")
)

// CheckpointError is why Resume refused a checkpoint. It matches
// ErrInvalidCheckpoint with errors.Is, and Err (ErrCheckpointMAC, or the
// decoding error of a store) too.
type CheckpointError struct {
	RunID string
	// Reason says what is wrong, such as "pending call \"c1\" is not a
	// call of the interrupted turn"; it names calls and fields, never
	// the MAC key.
	Reason string
	Err    error
}

func (e *CheckpointError) Error() string {
	msg := "runlet: checkpoint of run " + strconv.Quote(e.RunID) + " is not valid: " + e.Reason
	if e.Err != nil && e.Err != ErrInvalidCheckpoint {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrInvalidCheckpoint and Err.
func (e *CheckpointError) Unwrap() []error {
	if e.Err == nil || e.Err == ErrInvalidCheckpoint {
		return []error{ErrInvalidCheckpoint}
	}
	return []error{ErrInvalidCheckpoint, e.Err}
}

// ProviderError is a failure reported by, or while talking to, a model
// provider. Every adapter returns this type, so errors classify the same way
// whatever the provider.
type ProviderError struct {
	Provider   string        // adapter name, such as "openai" or "anthropic"
	StatusCode int           // HTTP status: the response's, or the one an error sent inside a stream names (a numeric code, status_code); 0 when none, such as before a response
	Code       string        // provider error code, such as "rate_limit_exceeded"
	Type       string        // provider error type, such as "invalid_request_error"
	Message    string        // provider message (never contains credentials)
	RequestID  string        // provider request ID, when the response had one
	Retryable  bool          // a later identical request may succeed
	RetryAfter time.Duration // server-requested wait, when given
	Err        error         // underlying cause, if any
}

func (e *ProviderError) Error() string {
	b := make([]byte, 0, 96)
	if e.Provider != "" {
		b = append(b, e.Provider...)
		b = append(b, ": "...)
	}
	if e.StatusCode != 0 {
		b = append(b, "HTTP "...)
		b = strconv.AppendInt(b, int64(e.StatusCode), 10)
		b = append(b, ' ')
	}
	switch {
	case e.Code != "" && e.Type != "":
		b = append(b, '(')
		b = append(b, e.Type...)
		b = append(b, '/')
		b = append(b, e.Code...)
		b = append(b, ") "...)
	case e.Code != "" || e.Type != "":
		b = append(b, '(')
		b = append(b, e.Code...)
		b = append(b, e.Type...)
		b = append(b, ") "...)
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	b = append(b, msg...)
	if e.Message != "" && e.Err != nil && e.Err.Error() != e.Message {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the cause.
func (e *ProviderError) Unwrap() error { return e.Err }

// ToolError is a tool failure. The runtime turns it into an is-error tool
// result the model sees; it also reaches hooks and the tool.finished event.
type ToolError struct {
	Tool   string
	CallID string
	Kind   ToolErrorKind
	Err    error
}

// ToolErrorKind classifies tool failures.
type ToolErrorKind string

// Tool error kinds.
const (
	ToolUnknown     ToolErrorKind = "unknown_tool"
	ToolInvalidJSON ToolErrorKind = "invalid_json"
	ToolInvalidArgs ToolErrorKind = "invalid_arguments"
	ToolFailed      ToolErrorKind = "failed"
	ToolPanicked    ToolErrorKind = "panicked"
	ToolTimedOut    ToolErrorKind = "timed_out"
	ToolDenied      ToolErrorKind = "denied"
	ToolCanceled    ToolErrorKind = "canceled"
	// ToolOutputTooLarge: the tool returned an image, file, audio clip or
	// structured value larger than the output cap (WithMaxToolOutput),
	// which cannot be cut as text is.
	ToolOutputTooLarge ToolErrorKind = "output_too_large"
)

func (e *ToolError) Error() string {
	return fmt.Sprintf("tool %q: %s: %v", e.Tool, e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *ToolError) Unwrap() error { return e.Err }

// PolicyError says which policy stopped a run: "max_turns",
// "usage_limit:total_tokens", "hook:BeforeModelCall", ... It wraps the
// sentinel (ErrMaxTurns, ErrUsageLimit) or the hook's error.
type PolicyError struct {
	Policy string
	Err    error
}

func (e *PolicyError) Error() string { return e.Err.Error() + " (policy " + e.Policy + ")" }

// Unwrap returns the cause.
func (e *PolicyError) Unwrap() error { return e.Err }

// errorType classifies a run's error for RunFailed.ErrorType.
func errorType(err error, policy string) string {
	var pe *ProviderError
	var oe *OutputError
	var re *RefusalError
	switch {
	case policy != "":
		return policy
	case errors.As(err, &oe):
		return "output_invalid"
	case errors.As(err, &re):
		return "refusal"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, ErrStreamIncomplete):
		return "stream_incomplete"
	case errors.Is(err, ErrMalformedStream):
		return "malformed_response"
	case errors.Is(err, ErrInvalidRequest):
		return "invalid_request"
	case errors.Is(err, ErrResponseTooLarge):
		return "response_too_large"
	case errors.As(err, &pe) && pe.StatusCode != 0:
		return strconv.Itoa(pe.StatusCode)
	case errors.As(err, &pe) && pe.Code != "":
		return pe.Code
	case errors.As(err, &pe) && pe.Type != "":
		return pe.Type
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.Is(err, ErrInvalidCheckpoint):
		return "invalid_checkpoint"
	}
	return "error"
}

// Deny returns the error a BeforeToolCall hook returns to deny a call: the
// model sees an is-error result with reason and the run goes on.
func Deny(reason string) error { return &denyError{reason: reason} }

type denyError struct{ reason string }

func (e *denyError) Error() string { return "denied: " + e.reason }
