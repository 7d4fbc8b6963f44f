package sqlite

import (
	"strings"
	"time"

	"github.com/runlet/runlet/store/internal/storerow"
)

// Option configures [Open].
type Option func(*config)

type config struct {
	busyTimeout time.Duration
	synchronous string
	readers     int
	limits      storerow.Limits
}

// WithBusyTimeout sets how long a write waits for another process holding
// the write lock on the same file before it fails (default 5s). Writers in
// one process never wait on SQLite's lock: they queue for the Store's write
// connection, which honours the context.
func WithBusyTimeout(d time.Duration) Option {
	return func(c *config) { c.busyTimeout = d }
}

// WithSynchronous sets PRAGMA synchronous: "FULL" (the default) makes every
// commit durable against power loss; "NORMAL" keeps the file consistent and
// survives a process crash, but after a power loss may lose the last commits,
// in exchange for much faster writes (no fsync per commit). Any other value
// makes Open fail.
func WithSynchronous(mode string) Option {
	return func(c *config) { c.synchronous = strings.ToUpper(mode) }
}

// WithMaxReaders bounds the pool of read connections (default: GOMAXPROCS,
// at least 4).
func WithMaxReaders(n int) Option {
	return func(c *config) { c.readers = n }
}

// WithMaxRowBytes bounds the size of one row the Store reads or writes: a
// message's or a checkpoint's JSON, a state value (default
// [runlet.DefaultMaxRowBytes], 64 MiB; negative: no limit). A larger row is
// refused with a [*runlet.StoreLimitError] before its value is read.
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
