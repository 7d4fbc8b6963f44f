package redis

import (
	"fmt"
	"strings"

	"github.com/runlet/runlet"
)

// Someone other than this program can write to the Redis, so the Store
// measures values on the server (STRLEN, HSTRLEN, LLEN and the loading
// script) and refuses one over its limits before Redis sends it.

// WithMaxRowBytes bounds the size of one value the Store reads or writes: a
// message's or a checkpoint's JSON, a state value (default
// [runlet.DefaultMaxRowBytes], 64 MiB; negative: no limit). A larger one is
// refused with a [*runlet.StoreLimitError] before Redis sends it.
func WithMaxRowBytes(n int64) Option {
	return func(c *config) { c.limits.RowBytes = n }
}

// WithMaxSessionBytes bounds the total size of the messages
// [Store.LoadSession] reads for one session (default
// [runlet.DefaultMaxSessionBytes], 256 MiB; negative: no limit).
func WithMaxSessionBytes(n int64) Option {
	return func(c *config) { c.limits.SessionBytes = n }
}

// WithMaxSessionMessages bounds the number of messages [Store.LoadSession]
// reads for one session, and that [Store.AppendSession] lets a session
// grow to (default [runlet.DefaultMaxSessionMessages], 100,000; negative:
// no limit).
func WithMaxSessionMessages(n int) Option {
	return func(c *config) { c.limits.SessionMessages = int64(n) }
}

// invalid marks an error from Redis saying a key holds another type than
// the Store keeps there (someone else wrote it) as runlet.ErrInvalidRow.
func invalid(what string, err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") {
		return fmt.Errorf("%s: %w: %w", what, runlet.ErrInvalidRow, err)
	}
	return err
}
