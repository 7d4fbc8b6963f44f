// Package storerow holds what the durable stores share about reading rows
// someone else may have written: the limits on their sizes and the checks
// of a decoded message.
package storerow

import (
	"encoding/json"
	"fmt"

	"github.com/runlet/runlet"
)

// Limits are a store's bounds on what it reads and writes. Zero fields take
// the runlet defaults; negative ones mean no limit.
type Limits struct {
	RowBytes        int64
	SessionBytes    int64
	SessionMessages int64
	// Pkg names the store's package in the options an error points to,
	// e.g. "sqlite".
	Pkg string
}

// WithDefaults returns l with zero fields set to the defaults and negative
// ones to no limit.
func (l Limits) WithDefaults() Limits {
	l.RowBytes = pick(l.RowBytes, runlet.DefaultMaxRowBytes)
	l.SessionBytes = pick(l.SessionBytes, runlet.DefaultMaxSessionBytes)
	l.SessionMessages = pick(l.SessionMessages, runlet.DefaultMaxSessionMessages)
	return l
}

// noLimit is what a negative limit becomes: larger than any row.
const noLimit = 1<<63 - 1

func pick(v, def int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return noLimit
	}
	return v
}

// Row returns a *runlet.StoreLimitError for a row of size bytes over
// RowBytes, or nil.
func (l Limits) Row(what string, size int64) error {
	if size <= l.RowBytes {
		return nil
	}
	return &runlet.StoreLimitError{What: what, Size: size, Limit: l.RowBytes, Unit: "bytes", Option: l.Pkg + ".WithMaxRowBytes"}
}

// Session returns a *runlet.StoreLimitError for a session holding (at
// least) messages messages of bytes bytes in all, over SessionMessages or
// SessionBytes, or nil.
func (l Limits) Session(sessionID string, messages, bytes int64) error {
	what := fmt.Sprintf("session %q", sessionID)
	if messages > l.SessionMessages {
		return &runlet.StoreLimitError{What: what, Size: messages, Limit: l.SessionMessages, Unit: "messages", Option: l.Pkg + ".WithMaxSessionMessages"}
	}
	if bytes > l.SessionBytes {
		return &runlet.StoreLimitError{What: what, Size: bytes, Limit: l.SessionBytes, Unit: "bytes", Option: l.Pkg + ".WithMaxSessionBytes"}
	}
	return nil
}

// Message names message seq of a session in errors.
func Message(sessionID string, seq int) string {
	return fmt.Sprintf("message %d of session %q", seq, sessionID)
}

// DecodeMessage decodes the stored message seq of a session into m and
// checks it: a row that does not decode, or decodes into an unknown role,
// is an error wrapping runlet.ErrInvalidRow (unknown part types do not
// decode).
func DecodeMessage(sessionID string, seq int, raw []byte, m *runlet.Message) error {
	if err := json.Unmarshal(raw, m); err != nil {
		return fmt.Errorf("%s: %w: %w", Message(sessionID, seq), runlet.ErrInvalidRow, err)
	}
	switch m.Role {
	case runlet.RoleUser, runlet.RoleAssistant, runlet.RoleTool:
	default:
		return fmt.Errorf("%s: %w: unknown role %q", Message(sessionID, seq), runlet.ErrInvalidRow, m.Role)
	}
	return nil
}

// Checkpoint names a run's checkpoint in errors.
func Checkpoint(runID string) string { return fmt.Sprintf("checkpoint of run %q", runID) }

// State names a state value in errors.
func State(sessionID, key string) string {
	return fmt.Sprintf("state %q of session %q", key, sessionID)
}
