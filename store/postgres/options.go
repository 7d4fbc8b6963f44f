package postgres

import (
	"github.com/runlet/runlet/store/internal/storerow"
)

// Option configures [Open] and [New].
type Option func(*config)

type config struct {
	schema string
	limits storerow.Limits
}

// WithSchema puts the tables in the named schema, creating it if missing.
// By default they go to the first schema of the connection's search_path
// (usually public).
func WithSchema(name string) Option {
	return func(c *config) { c.schema = name }
}

// WithMaxRowBytes bounds the size of one row the Store reads or writes: a
// message's or a checkpoint's JSON, a state value (default
// [runlet.DefaultMaxRowBytes], 64 MiB; negative: no limit). A larger row is
// refused with a [*runlet.StoreLimitError] before its value is sent.
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
