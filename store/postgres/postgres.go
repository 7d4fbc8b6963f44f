// Package postgres is a [runlet.Store] on PostgreSQL, for several application
// instances sharing sessions, state and run checkpoints. It uses
// github.com/jackc/pgx/v5 with a connection pool.
//
//	store, err := postgres.Open(ctx, "postgres://app@db.internal:5432/app")
//	if err != nil { ... }
//	defer store.Close()
//	rt := runlet.NewRuntime(runlet.WithStore(store))
//
// [New] takes a pool the application already has.
//
// # Concurrency
//
// Instances coordinate through the database alone. [Store.AppendSession] is
// one statement that advances the session's length only if it still equals
// `after` and inserts the batch in the same step, so a turn is stored whole
// or not at all, and of two instances appending to one session the second
// fails with an error wrapping [runlet.ErrConflict] instead of interleaving
// half turns. [Store.ClaimCheckpoint] deletes and returns the checkpoint in
// one transaction, so exactly one of several concurrent resumes gets it.
//
// # Limits
//
// Whoever can write the tables can write any row, so what the Store reads
// is bounded: a row (a message, a checkpoint, a state value) over
// [WithMaxRowBytes] is refused before the server sends its value, and
// [Store.LoadSession] stops at a session over [WithMaxSessionMessages] or
// [WithMaxSessionBytes], with a [*runlet.StoreLimitError]. A message row
// that does not decode, or names an unknown role or part type, is an error
// wrapping [runlet.ErrInvalidRow]. Writes over the row and message limits
// are refused the same way, so the Store never writes what it would refuse
// to read back.
//
// # Schema
//
// Tables are named runlet_sessions, runlet_messages, runlet_state,
// runlet_checkpoints and runlet_schema_version, in the schema given with
// [WithSchema] (created if missing) or else the first schema of the
// connection's search_path. Messages (one row per message, numbered by seq)
// and checkpoints are stored as the exact bytes of their JSON in bytea
// columns: jsonb would reorder the keys of tool arguments and reject
// \u0000, and text would reject raw tool arguments that are not valid UTF-8.
// Query them with convert_from(message, 'UTF8')::jsonb. State values are
// bytea too. [Open] and [New] apply
// pending migrations in one transaction under an advisory lock, so instances
// starting together migrate once; a database migrated by a newer version
// makes them fail with an error wrapping [ErrSchemaTooNew].
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/internal/storerow"
)

// ErrSchemaTooNew is returned by [Open] and [New] for a database whose
// schema was written by a newer version of this package.
var ErrSchemaTooNew = errors.New("postgres: database schema is newer than this package supports")

// Store is a [runlet.Store] on PostgreSQL. Create it with [Open] or [New];
// it is safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	schema  string
	q       queries
	limits  storerow.Limits
}

var _ runlet.Store = (*Store)(nil)

// Open connects to the database at dsn (a URL or key=value string, see
// pgxpool.ParseConfig), applies pending migrations and returns a Store that
// owns the pool: Close closes it.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// New returns a Store using pool, after applying pending migrations. The
// pool stays the caller's: Close leaves it open.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: nil pool")
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	prefix := ""
	if cfg.schema != "" {
		prefix = pgx.Identifier{cfg.schema}.Sanitize() + "."
	}
	cfg.limits.Pkg = "postgres"
	s := &Store{pool: pool, schema: cfg.schema, q: newQueries(prefix), limits: cfg.limits.WithDefaults()}
	if err := s.migrate(ctx, prefix); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the pool if [Open] created it.
func (s *Store) Close() {
	if s.ownPool {
		s.pool.Close()
	}
}

// Pool returns the Store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// queries are the statements, with table names qualified by the schema.
type queries struct {
	loadSession, sessionLength, createSession, appendSession string
	getState, setState, deleteState                          string
	saveCheckpoint, loadCheckpoint, claimCheckpoint          string
	deleteCheckpoint                                         string
}

func newQueries(p string) queries {
	r := strings.NewReplacer("{p}", p)
	return queries{
		// Each row's size comes first, and a row over the limit ($2) is not
		// sent; one message past the count limit ($3) is enough to refuse
		// the session.
		loadSession: r.Replace(`SELECT seq, octet_length(message), CASE WHEN octet_length(message) <= $2::bigint THEN message END
FROM {p}runlet_messages WHERE session_id = $1 ORDER BY seq LIMIT $3::bigint`),
		sessionLength: r.Replace(`SELECT length FROM {p}runlet_sessions WHERE id = $1`),
		createSession: r.Replace(`INSERT INTO {p}runlet_sessions (id, length) VALUES ($1, 0) ON CONFLICT (id) DO NOTHING`),
		// One statement: the length moves from $2 to $2+$3 only if it is
		// still $2 (a concurrent append blocks on the row lock, then sees
		// the new length and matches nothing), and the messages go in only
		// if it did.
		appendSession: r.Replace(`WITH s AS (
	UPDATE {p}runlet_sessions SET length = length + $3, updated_at = now()
	WHERE id = $1 AND length = $2
	RETURNING id
)
INSERT INTO {p}runlet_messages (session_id, seq, message)
SELECT s.id, $2 + m.ord - 1, m.message
FROM s, unnest($4::bytea[]) WITH ORDINALITY AS m (message, ord)`),
		getState: r.Replace(`SELECT octet_length(value), CASE WHEN octet_length(value) <= $3::bigint THEN value END
FROM {p}runlet_state WHERE session_id = $1 AND key = $2`),
		setState: r.Replace(`INSERT INTO {p}runlet_state (session_id, key, value) VALUES ($1, $2, $3)
ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated_at = now()`),
		deleteState: r.Replace(`DELETE FROM {p}runlet_state WHERE session_id = $1 AND key = $2`),
		saveCheckpoint: r.Replace(`INSERT INTO {p}runlet_checkpoints (run_id, session_id, checkpoint) VALUES ($1, $2, $3)
ON CONFLICT (run_id) DO UPDATE SET session_id = excluded.session_id, checkpoint = excluded.checkpoint, saved_at = now()`),
		loadCheckpoint: r.Replace(`SELECT octet_length(checkpoint), CASE WHEN octet_length(checkpoint) <= $2::bigint THEN checkpoint END
FROM {p}runlet_checkpoints WHERE run_id = $1`),
		claimCheckpoint: r.Replace(`DELETE FROM {p}runlet_checkpoints WHERE run_id = $1
RETURNING octet_length(checkpoint), CASE WHEN octet_length(checkpoint) <= $2::bigint THEN checkpoint END`),
		deleteCheckpoint: r.Replace(`DELETE FROM {p}runlet_checkpoints WHERE run_id = $1`),
	}
}

// LoadSession implements [runlet.SessionStore].
func (s *Store) LoadSession(ctx context.Context, sessionID string) ([]runlet.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: load session: %w", err)
	}
	lim := s.limits
	rows, err := s.pool.Query(ctx, s.q.loadSession, sessionID, lim.RowBytes, min(lim.SessionMessages, 1<<62)+1)
	if err != nil {
		return nil, fmt.Errorf("postgres: load session: %w", err)
	}
	defer rows.Close()
	var msgs []runlet.Message
	var total int64
	for rows.Next() {
		var seq int
		var size int64
		if err := rows.Scan(&seq, &size, nil); err != nil {
			return nil, fmt.Errorf("postgres: load session: %w", err)
		}
		total += size
		if err := lim.Row(storerow.Message(sessionID, seq), size); err != nil {
			return nil, fmt.Errorf("postgres: load session: %w", err)
		}
		if err := lim.Session(sessionID, int64(len(msgs)+1), total); err != nil {
			return nil, fmt.Errorf("postgres: load session: %w", err)
		}
		// RawValues are valid until Next; Unmarshal copies what it keeps.
		msgs = append(msgs, runlet.Message{})
		if err := storerow.DecodeMessage(sessionID, seq, rows.RawValues()[2], &msgs[len(msgs)-1]); err != nil {
			return nil, fmt.Errorf("postgres: load session: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: load session: %w", err)
	}
	return msgs, nil
}

// AppendSession implements [runlet.SessionStore]: the length check and the
// insert are one statement, so the batch is stored whole or not at all.
func (s *Store) AppendSession(ctx context.Context, sessionID string, after int, msgs []runlet.Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: append session: %w", err)
	}
	if len(msgs) == 0 || after < 0 {
		length, err := s.sessionLength(ctx, sessionID)
		if err != nil {
			return err
		}
		if length != after {
			return conflict(sessionID, after, length)
		}
		return nil
	}
	enc := make([][]byte, len(msgs))
	for i := range msgs {
		b, err := json.Marshal(&msgs[i])
		if err != nil {
			return fmt.Errorf("postgres: append session %q: encode message %d: %w", sessionID, i, err)
		}
		if err := s.limits.Row(storerow.Message(sessionID, after+i), int64(len(b))); err != nil {
			return fmt.Errorf("postgres: append session: %w", err)
		}
		enc[i] = b
	}
	if err := s.limits.Session(sessionID, int64(after)+int64(len(msgs)), 0); err != nil {
		return fmt.Errorf("postgres: append session: %w", err)
	}

	var tag pgconn.CommandTag
	var err error
	if after == 0 {
		// A new session needs its row first; both statements go in one
		// round trip.
		b := &pgx.Batch{}
		b.Queue(s.q.createSession, sessionID)
		b.Queue(s.q.appendSession, sessionID, after, len(msgs), enc)
		br := s.pool.SendBatch(ctx, b)
		if _, err = br.Exec(); err == nil {
			tag, err = br.Exec()
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	} else {
		tag, err = s.pool.Exec(ctx, s.q.appendSession, sessionID, after, len(msgs), enc)
	}
	if err != nil {
		if isConflict(err) {
			return fmt.Errorf("postgres: session %q changed concurrently: %w (%w)", sessionID, runlet.ErrConflict, err)
		}
		return fmt.Errorf("postgres: append session: %w", err)
	}
	switch n := tag.RowsAffected(); {
	case n == int64(len(msgs)):
		return nil
	case n == 0:
		length, err := s.sessionLength(ctx, sessionID)
		if err != nil {
			return fmt.Errorf("postgres: session %q changed concurrently: %w (%w)", sessionID, runlet.ErrConflict, err)
		}
		return conflict(sessionID, after, length)
	default:
		return fmt.Errorf("postgres: append session %q: inserted %d of %d messages", sessionID, n, len(msgs))
	}
}

func (s *Store) sessionLength(ctx context.Context, sessionID string) (int, error) {
	var length int
	err := s.pool.QueryRow(ctx, s.q.sessionLength, sessionID).Scan(&length)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: session length: %w", err)
	}
	return length, nil
}

// isConflict reports errors that mean another writer got there first: a
// duplicate (session, seq) and, under SERIALIZABLE or REPEATABLE READ
// defaults, a serialization failure.
func isConflict(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "40001")
}

func conflict(sessionID string, want, have int) error {
	return fmt.Errorf("postgres: session %q changed concurrently (expected %d messages, found %d): %w",
		sessionID, want, have, runlet.ErrConflict)
}

// GetState implements [runlet.StateStore].
func (s *Store) GetState(ctx context.Context, sessionID, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: get state: %w", err)
	}
	var v []byte
	var size int64
	err := s.pool.QueryRow(ctx, s.q.getState, sessionID, key, s.limits.RowBytes).Scan(&size, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: state %q of session %q: %w", key, sessionID, runlet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get state: %w", err)
	}
	if err := s.limits.Row(storerow.State(sessionID, key), size); err != nil {
		return nil, fmt.Errorf("postgres: get state: %w", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// SetState implements [runlet.StateStore].
func (s *Store) SetState(ctx context.Context, sessionID, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: set state: %w", err)
	}
	if err := s.limits.Row(storerow.State(sessionID, key), int64(len(value))); err != nil {
		return fmt.Errorf("postgres: set state: %w", err)
	}
	if value == nil {
		value = []byte{}
	}
	if _, err := s.pool.Exec(ctx, s.q.setState, sessionID, key, value); err != nil {
		return fmt.Errorf("postgres: set state: %w", err)
	}
	return nil
}

// DeleteState implements [runlet.StateStore]. Deleting a missing key is not
// an error.
func (s *Store) DeleteState(ctx context.Context, sessionID, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: delete state: %w", err)
	}
	if _, err := s.pool.Exec(ctx, s.q.deleteState, sessionID, key); err != nil {
		return fmt.Errorf("postgres: delete state: %w", err)
	}
	return nil
}

// SaveCheckpoint implements [runlet.CheckpointStore]. It replaces an earlier
// checkpoint of the same run.
func (s *Store) SaveCheckpoint(ctx context.Context, cp *runlet.Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: save checkpoint: %w", err)
	}
	if cp == nil || cp.RunID == "" {
		return errors.New("postgres: save checkpoint: checkpoint without a run ID")
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("postgres: save checkpoint %q: encode: %w", cp.RunID, err)
	}
	if err := s.limits.Row(storerow.Checkpoint(cp.RunID), int64(len(data))); err != nil {
		return fmt.Errorf("postgres: save checkpoint: %w", err)
	}
	if _, err := s.pool.Exec(ctx, s.q.saveCheckpoint, cp.RunID, cp.SessionID, data); err != nil {
		return fmt.Errorf("postgres: save checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint implements [runlet.CheckpointStore].
func (s *Store) LoadCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: load checkpoint: %w", err)
	}
	var data []byte
	var size int64
	err := s.pool.QueryRow(ctx, s.q.loadCheckpoint, runID, s.limits.RowBytes).Scan(&size, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(runID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: load checkpoint: %w", err)
	}
	if err := s.limits.Row(storerow.Checkpoint(runID), size); err != nil {
		return nil, fmt.Errorf("postgres: load checkpoint: %w", err)
	}
	return decodeCheckpoint(runID, data)
}

// ClaimCheckpoint implements [runlet.CheckpointStore]: DELETE ... RETURNING
// in a transaction, so of several concurrent claims, on any instances,
// exactly one gets the checkpoint. A checkpoint that does not decode is left
// in place.
func (s *Store) ClaimCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: claim checkpoint: %w", err)
	}
	var cp *runlet.Checkpoint
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// A checkpoint over the limit is refused unsent, and stays: the
		// transaction rolls back.
		var data []byte
		var size int64
		if err := tx.QueryRow(ctx, s.q.claimCheckpoint, runID, s.limits.RowBytes).Scan(&size, &data); err != nil {
			return err
		}
		if err := s.limits.Row(storerow.Checkpoint(runID), size); err != nil {
			return err
		}
		var err error
		cp, err = decodeCheckpoint(runID, data)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(runID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: claim checkpoint: %w", err)
	}
	return cp, nil
}

// DeleteCheckpoint implements [runlet.CheckpointStore]. Deleting a missing
// checkpoint is not an error.
func (s *Store) DeleteCheckpoint(ctx context.Context, runID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: delete checkpoint: %w", err)
	}
	if _, err := s.pool.Exec(ctx, s.q.deleteCheckpoint, runID); err != nil {
		return fmt.Errorf("postgres: delete checkpoint: %w", err)
	}
	return nil
}

func notFound(runID string) error {
	return fmt.Errorf("postgres: checkpoint of run %q: %w", runID, runlet.ErrNotFound)
}

func decodeCheckpoint(runID string, data []byte) (*runlet.Checkpoint, error) {
	cp := new(runlet.Checkpoint)
	if err := json.Unmarshal(data, cp); err != nil {
		return nil, fmt.Errorf("postgres: %w", &runlet.CheckpointError{RunID: runID, Reason: "it does not decode", Err: err})
	}
	return cp, nil
}
