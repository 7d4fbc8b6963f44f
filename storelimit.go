package runlet

import (
	"errors"
	"fmt"
)

// Limits on what a store reads. A store's rows can be written by someone
// other than the program (another process, a restored backup, an operator),
// so the durable stores (store/sqlite, store/postgres) refuse a row or a
// session over these sizes before reading it whole, and a row that does not
// decode into what they store.
const (
	// DefaultMaxRowBytes bounds one stored row: a message, a checkpoint or
	// a state value (64 MiB).
	DefaultMaxRowBytes = 64 << 20
	// DefaultMaxSessionBytes bounds the encoded messages of one session
	// read by LoadSession (256 MiB).
	DefaultMaxSessionBytes = 256 << 20
	// DefaultMaxSessionMessages bounds the number of messages of one
	// session read by LoadSession.
	DefaultMaxSessionMessages = 100_000
)

var (
	// ErrStoreLimit: a store refused to read or write a row or a session
	// larger than its limits (see DefaultMaxRowBytes). Such an error is a
	// *StoreLimitError.
	ErrStoreLimit = errors.New("runlet: stored data over the store's limit")
	// ErrInvalidRow: a store read a row that is not what it stores: a
	// message that does not decode, or decodes into an unknown role or part
	// type. The row stays as it is.
	ErrInvalidRow = errors.New("runlet: invalid stored row")
)

// StoreLimitError is a store's refusal of a row or session over one of its
// limits. It matches ErrStoreLimit with errors.Is.
type StoreLimitError struct {
	What   string // what was refused: `message 3 of session "s1"`, `session "s1"`, ...
	Size   int64  // its size, at least: where a store stops counting early, more than Limit
	Limit  int64
	Unit   string // "bytes" or "messages"
	Option string // the option that raises the limit, e.g. "sqlite.WithMaxRowBytes"
}

func (e *StoreLimitError) Error() string {
	msg := fmt.Sprintf("runlet: %s is %d %s, over the store's limit of %d", e.What, e.Size, e.Unit, e.Limit)
	if e.Option != "" {
		msg += " (raise it with " + e.Option + ")"
	}
	return msg
}

// Unwrap returns ErrStoreLimit.
func (e *StoreLimitError) Unwrap() error { return ErrStoreLimit }
