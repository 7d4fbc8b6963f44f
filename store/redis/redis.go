// Package redis is a [runlet.Store] on Redis: session history, session
// key-value state and run checkpoints, shared by every application instance
// that talks to the same server. It uses github.com/redis/go-redis/v9.
//
//	store, err := redis.Open(ctx, "redis://:password@cache.internal:6379/0")
//	if err != nil { ... }
//	defer store.Close()
//	rt := runlet.NewRuntime(runlet.WithStore(store))
//
// [New] takes a client the application already has (any
// goredis.UniversalClient: a plain client, a Sentinel failover client or a
// Cluster client).
//
// # Atomicity and concurrency
//
// Every write is one Lua script, which Redis runs atomically: no other
// command runs while it does, it is never stopped half-way (not even by
// maxmemory, which can only refuse it before its first write), and it
// reaches replicas and the append-only file as one MULTI/EXEC block.
// [Store.AppendSession] checks the session's length and pushes the whole
// batch in the same script, so a turn is stored whole or not at all, and of
// two instances appending to one session with the same `after` the second
// fails with an error wrapping [runlet.ErrConflict] instead of interleaving
// half turns. [Store.ClaimCheckpoint] deletes the checkpoint only if it is
// still the one it read (compared by SHA-1 inside a script), so exactly one
// of several concurrent resumes gets it. A client that dies or loses its
// connection mid-call leaves either the whole write or none of it: Redis
// runs a command only once it has received all of it.
//
// # Keys
//
// All keys start with the prefix ([WithPrefix], default "runlet:"), so
// several applications or environments can share one Redis:
//
//	runlet:{s:<session>}:messages   a list: the session's messages, as JSON
//	runlet:{s:<session>}:state      a hash: the session's state, key → value
//	runlet:checkpoint:<run>         a string: the run's checkpoint, as JSON
//
// The braces are a Redis Cluster hash tag: a session's two keys live in the
// same slot, as the scripts that write both need (a prefix for a Cluster
// must not contain braces itself).
//
// # Limits
//
// Whoever can write to the Redis can write any value under the prefix, so
// the Store measures what it is about to read on the server, with STRLEN,
// HSTRLEN, LLEN and a loading script that sums a session's messages, and
// refuses a message, state value or checkpoint over [WithMaxRowBytes], or a
// session over [WithMaxSessionMessages] or [WithMaxSessionBytes], with a
// [*runlet.StoreLimitError] before Redis sends any of it (a refused claim
// leaves the checkpoint). It refuses writes over the row and message limits
// the same way. A message that does not decode into a known role and part
// types, or a key of another type than the layout's, is an error wrapping
// [runlet.ErrInvalidRow].
//
// # Expiry
//
// By default nothing expires. [WithSessionTTL] makes a session (its
// messages and its state together) expire that long after its last write:
// every append, state write and state delete sets both keys' expiry again.
// Reads do not extend it. [WithCheckpointTTL] makes a checkpoint expire that
// long after it was saved; an expired checkpoint can no longer be resumed
// (LoadCheckpoint and ClaimCheckpoint report [runlet.ErrNotFound]).
// Under memory pressure Redis may also evict keys before they expire, as
// its maxmemory-policy says: run the store on a server (or database) whose
// policy is noeviction, or volatile-* with no TTLs here, if sessions must
// not vanish.
//
// # Durability
//
// What survives a crash of the Redis server depends on its persistence
// settings, not on this package; but whatever is lost is lost in whole
// writes, never a half turn, because each write is one script:
//
//   - appendonly yes, appendfsync always: each write is in the append-only
//     file (AOF) and fsynced before its reply; a crash, even a power loss,
//     loses nothing the store reported as done.
//   - appendonly yes, appendfsync everysec: a crash of the Redis process
//     can lose the last write, a power loss or kernel crash about the last
//     second of writes — complete turns the store reported as done. The
//     AOF holds each script's writes as one MULTI/EXEC block, and a
//     truncated block at the end of the file is dropped when Redis loads
//     it (aof-load-truncated yes, the default), so no half turn is
//     replayed.
//   - RDB snapshots only (save ..., Debian's and Redis's default, with
//     appendonly no): a crash loses every write since the last snapshot,
//     possibly many complete turns, and a session goes back to its length
//     then. A snapshot is taken between commands, so it holds whole turns
//     only.
//   - no persistence: a restart loses everything.
//
// Replication is asynchronous: a failover to a replica can lose the last
// acknowledged writes, again whole ones. A run whose append was lost sees
// a shorter session next time and appends after it; a lost checkpoint
// cannot be resumed. For history that must never be lost, use appendonly
// yes with appendfsync always, or store/postgres.
package redis

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/internal/storerow"
)

// DefaultPrefix is the key prefix used without [WithPrefix].
const DefaultPrefix = "runlet:"

// Option configures [Open] and [New].
type Option func(*config)

type config struct {
	prefix        string
	sessionTTL    time.Duration
	checkpointTTL time.Duration
	limits        storerow.Limits
}

// WithPrefix sets the prefix of every key the Store reads or writes
// (default [DefaultPrefix], "runlet:"). Stores with different prefixes on
// one Redis do not see each other's data.
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithSessionTTL makes each session — its messages and its state —
// expire ttl after its last write (append, SetState or DeleteState). Zero,
// the default, keeps sessions until they are deleted. Redis keeps expiry to
// the millisecond.
func WithSessionTTL(ttl time.Duration) Option {
	return func(c *config) { c.sessionTTL = ttl }
}

// WithCheckpointTTL makes each checkpoint expire ttl after it was saved.
// Zero, the default, keeps checkpoints until they are claimed or deleted.
func WithCheckpointTTL(ttl time.Duration) Option {
	return func(c *config) { c.checkpointTTL = ttl }
}

// Store is a [runlet.Store] on Redis. Create it with [Open] or [New]; it is
// safe for concurrent use.
type Store struct {
	client    goredis.UniversalClient
	ownClient bool
	cfg       config
}

var _ runlet.Store = (*Store)(nil)

// Open connects to the Redis server at url, a redis:// or rediss:// (TLS)
// URL as goredis.ParseURL reads it (redis://user:password@host:port/db,
// with query options such as dial_timeout), checks that it answers, and
// returns a Store that owns the client: Close closes it. The client
// respects the deadlines and cancellation of the contexts passed to the
// Store's methods. Errors never include the URL, which may hold a password.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis: open: %w", redactURLError(err))
	}
	o.ContextTimeoutEnabled = true
	client := goredis.NewClient(o)
	s, err := New(client, opts...)
	if err != nil {
		client.Close()
		return nil, err
	}
	s.ownClient = true
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("redis: open: %w", err)
	}
	return s, nil
}

// redactURLError drops the URL from a *url.Error (which quotes it whole,
// password included), keeping what went wrong.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("invalid URL: %w", ue.Err)
	}
	return err
}

// New returns a Store using client. The client stays the caller's: Close
// leaves it open. Set the client's ContextTimeoutEnabled option for the
// Store's methods to respect context deadlines while waiting on the
// network.
func New(client goredis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("redis: nil client")
	}
	cfg := config{prefix: DefaultPrefix}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.limits.Pkg = "redis"
	cfg.limits = cfg.limits.WithDefaults()
	if cfg.sessionTTL < 0 || cfg.checkpointTTL < 0 {
		return nil, errors.New("redis: negative TTL")
	}
	// Redis keeps expiry in whole milliseconds; a shorter TTL would be 0,
	// which PEXPIRE refuses.
	if (cfg.sessionTTL > 0 && cfg.sessionTTL < time.Millisecond) || (cfg.checkpointTTL > 0 && cfg.checkpointTTL < time.Millisecond) {
		return nil, errors.New("redis: TTL under a millisecond")
	}
	return &Store{client: client, cfg: cfg}, nil
}

// Close closes the client if [Open] created it.
func (s *Store) Close() error {
	if s.ownClient {
		return s.client.Close()
	}
	return nil
}

// Client returns the Store's Redis client.
func (s *Store) Client() goredis.UniversalClient { return s.client }

// messagesKey, stateKey and checkpointKey are the keys of the layout in the
// package doc. The session's keys end in different letters, so no session
// ID makes one session's key equal another's.
func (s *Store) messagesKey(sessionID string) string {
	return s.cfg.prefix + "{s:" + sessionID + "}:messages"
}

func (s *Store) stateKey(sessionID string) string {
	return s.cfg.prefix + "{s:" + sessionID + "}:state"
}

func (s *Store) checkpointKey(runID string) string {
	return s.cfg.prefix + "checkpoint:" + runID
}

// millis returns d in whole milliseconds, the unit of PEXPIRE and SET PX.
func millis(d time.Duration) int64 { return d.Milliseconds() }
