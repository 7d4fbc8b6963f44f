// Package sqlite is a durable [runlet.Store] in one SQLite file: session
// history, session key-value state and run checkpoints. It is pure Go
// (modernc.org/sqlite, no cgo), the embedded default for an application that
// must survive a restart.
//
//	store, err := sqlite.Open(ctx, "runlet.db")
//	if err != nil { ... }
//	defer store.Close()
//	rt := runlet.NewRuntime(runlet.WithStore(store))
//
// # Durability and concurrency
//
// The file is in WAL mode with foreign keys on and synchronous=FULL by
// default, so a committed append survives a process crash and a power loss
// (see [WithSynchronous] to trade the latter for speed). Every write is one
// transaction: [Store.AppendSession] checks the session's length and inserts
// the batch inside the same BEGIN IMMEDIATE transaction, so a turn is stored
// whole or not at all, and two writers can never interleave half turns —
// the loser gets an error wrapping [runlet.ErrConflict]. A process killed at
// any point leaves only complete appends and the last saved checkpoint.
//
// A Store is safe for concurrent use. Writes go through one connection (SQLite
// allows one writer at a time; queueing in Go instead of in SQLite's busy
// handler keeps SQLITE_BUSY from reaching callers), reads through a pool of
// read-only connections that WAL lets run alongside the writer. Several
// processes may open the same file; their writes wait for each other up to
// the busy timeout ([WithBusyTimeout]).
//
// # Files
//
// Sessions and checkpoints are private data: [Open] creates a new database
// file readable and writable by its owner only (0600), whatever the
// process's umask, and SQLite gives the -wal, -shm and -journal files it
// makes beside it the same mode. An existing file keeps the mode its owner
// gave it — Open neither loosens nor tightens it — so a file shared with a
// group on purpose stays shared; chmod 600 an older file (and its -wal and
// -shm) to make it private.
//
// # Limits
//
// Whoever can write the file can write any row, so what the Store reads is
// bounded: a row (a message, a checkpoint, a state value) over
// [WithMaxRowBytes] is refused before its value is read, and
// [Store.LoadSession] stops at a session over [WithMaxSessionMessages] or
// [WithMaxSessionBytes], with a [*runlet.StoreLimitError]. A message row
// that does not decode, or names an unknown role or part type, is an error
// wrapping [runlet.ErrInvalidRow]. Writes over the row and message limits
// are refused the same way, so the Store never writes what it would refuse
// to read back.
//
// # Schema
//
// Tables are prefixed runlet_ so the file can be shared with an application's
// own tables. Messages are stored one row per message, as the JSON of
// [runlet.Message], numbered by seq within the session; checkpoints as the
// JSON of [runlet.Checkpoint]; state values as BLOBs. The schema version is
// kept in runlet_schema_version, and [Open] applies pending migrations in one
// transaction; opening a file written by a newer version fails with an error
// wrapping [ErrSchemaTooNew].
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/internal/storerow"
)

// ErrSchemaTooNew is returned by [Open] for a file whose schema was written by
// a newer version of this package.
var ErrSchemaTooNew = errors.New("sqlite: database schema is newer than this package supports")

// Store is a [runlet.Store] backed by an SQLite file. Create it with [Open];
// it is safe for concurrent use.
type Store struct {
	path string
	wdb  *sql.DB // exactly one connection: the writer
	rdb  *sql.DB // read-only connections; the same as wdb for ":memory:"

	insertMessage *sql.Stmt // prepared on the writer
	limits        storerow.Limits
}

var _ runlet.Store = (*Store)(nil)

// Open opens (creating if needed) the SQLite database at path and applies
// pending schema migrations. The special path ":memory:" gives a private
// in-memory database that lives as long as the Store, for tests.
//
// The context bounds opening and migrating only.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	cfg := config{busyTimeout: 5 * time.Second, synchronous: "FULL"}
	for _, o := range opts {
		o(&cfg)
	}
	switch cfg.synchronous {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return nil, fmt.Errorf("sqlite: invalid synchronous mode %q (want FULL, NORMAL, EXTRA or OFF)", cfg.synchronous)
	}
	if cfg.readers <= 0 {
		cfg.readers = max(4, runtime.GOMAXPROCS(0))
	}
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}

	memory := path == ":memory:"
	var uri string
	if memory {
		uri = "file::memory:"
	} else {
		if err := createPrivate(path); err != nil {
			return nil, err
		}
		// A file: URI, so that '?' or '#' in the path cannot be taken for
		// parameters.
		uri = "file:" + (&url.URL{Path: path}).EscapedPath()
	}
	busy := strconv.FormatInt(cfg.busyTimeout.Milliseconds(), 10)
	common := "_busy_timeout=" + busy + "&_foreign_keys=1"

	writerDSN := uri + "?" + common + "&_synchronous=" + cfg.synchronous + "&_txlock=immediate"
	if !memory {
		writerDSN += "&_journal_mode=WAL"
	}
	wdb, err := sql.Open("sqlite", writerDSN)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	cfg.limits.Pkg = "sqlite"
	s := &Store{path: path, wdb: wdb, rdb: wdb, limits: cfg.limits.WithDefaults()}

	if err := s.migrateRetrying(ctx, cfg.busyTimeout); err != nil {
		wdb.Close()
		return nil, err
	}
	if !memory {
		rdb, err := sql.Open("sqlite", uri+"?"+common+"&_query_only=1")
		if err != nil {
			wdb.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		rdb.SetMaxOpenConns(cfg.readers)
		rdb.SetMaxIdleConns(cfg.readers)
		s.rdb = rdb
	}
	s.insertMessage, err = wdb.PrepareContext(ctx, `INSERT INTO runlet_messages (session_id, seq, message) VALUES (?, ?, ?)`)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	return s, nil
}

// createPrivate creates the database file, empty, readable and writable
// by its owner only (0600, whatever the umask), unless it exists. SQLite
// gives the -wal, -shm and -journal files it makes beside a database the
// database file's mode, so they are private too; an existing file keeps the
// mode its owner gave it.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: create database: %w", err)
	}
	err = f.Chmod(0o600) // the umask may have taken the owner's bits
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	return nil
}

// Close closes the database. Calls after Close fail.
func (s *Store) Close() error {
	var errs []error
	if s.insertMessage != nil {
		errs = append(errs, s.insertMessage.Close())
	}
	if s.rdb != s.wdb {
		errs = append(errs, s.rdb.Close())
	}
	errs = append(errs, s.wdb.Close())
	return errors.Join(errs...)
}

// Path returns the path the Store was opened with.
func (s *Store) Path() string { return s.path }

// now is the SQL expression for the current time, as ISO 8601 UTC with
// milliseconds.
const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`

// LoadSession implements [runlet.SessionStore].
func (s *Store) LoadSession(ctx context.Context, sessionID string) ([]runlet.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load session: %w", err)
	}
	// The size of each row comes first, and a row over the limit is not
	// read (SQLite reads octet_length from the record header); one message
	// past the count limit is enough to refuse the session.
	lim := s.limits
	rows, err := s.rdb.QueryContext(ctx, `SELECT seq, octet_length(message), CASE WHEN octet_length(message) <= ? THEN message END
		FROM runlet_messages WHERE session_id = ? ORDER BY seq LIMIT ?`, lim.RowBytes, sessionID, min(lim.SessionMessages, 1<<62)+1)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load session: %w", err)
	}
	defer rows.Close()
	var msgs []runlet.Message
	var total int64
	for rows.Next() {
		var seq int
		var size int64
		var raw sql.RawBytes // valid until Next; Unmarshal copies what it keeps
		if err := rows.Scan(&seq, &size, &raw); err != nil {
			return nil, fmt.Errorf("sqlite: load session: %w", err)
		}
		total += size
		if err := lim.Row(storerow.Message(sessionID, seq), size); err != nil {
			return nil, fmt.Errorf("sqlite: load session: %w", err)
		}
		if err := lim.Session(sessionID, int64(len(msgs)+1), total); err != nil {
			return nil, fmt.Errorf("sqlite: load session: %w", err)
		}
		msgs = append(msgs, runlet.Message{})
		if err := storerow.DecodeMessage(sessionID, seq, raw, &msgs[len(msgs)-1]); err != nil {
			return nil, fmt.Errorf("sqlite: load session: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load session: %w", err)
	}
	return msgs, nil
}

// AppendSession implements [runlet.SessionStore]. The length check and the
// inserts run in one transaction: the batch is stored whole or not at all.
func (s *Store) AppendSession(ctx context.Context, sessionID string, after int, msgs []runlet.Message) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: append session: %w", err)
	}
	// Encode before taking the write lock.
	enc := make([]string, len(msgs))
	for i := range msgs {
		b, err := json.Marshal(&msgs[i])
		if err != nil {
			return fmt.Errorf("sqlite: append session %q: encode message %d: %w", sessionID, i, err)
		}
		if err := s.limits.Row(storerow.Message(sessionID, after+i), int64(len(b))); err != nil {
			return fmt.Errorf("sqlite: append session: %w", err)
		}
		enc[i] = string(b)
	}
	if err := s.limits.Session(sessionID, int64(after)+int64(len(msgs)), 0); err != nil {
		return fmt.Errorf("sqlite: append session: %w", err)
	}

	tx, err := s.wdb.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock first
	if err != nil {
		return fmt.Errorf("sqlite: append session: %w", err)
	}
	defer tx.Rollback()

	length, exists := 0, true
	err = tx.QueryRowContext(ctx, `SELECT length FROM runlet_sessions WHERE id = ?`, sessionID).Scan(&length)
	if errors.Is(err, sql.ErrNoRows) {
		exists = false
	} else if err != nil {
		return fmt.Errorf("sqlite: append session: %w", err)
	}
	if length != after {
		return conflict(sessionID, after, length)
	}
	if len(msgs) == 0 {
		return nil
	}
	if exists {
		_, err = tx.ExecContext(ctx, `UPDATE runlet_sessions SET length = ?, updated_at = `+now+` WHERE id = ?`, after+len(msgs), sessionID)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO runlet_sessions (id, length, created_at, updated_at) VALUES (?, ?, `+now+`, `+now+`)`, sessionID, len(msgs))
	}
	if err != nil {
		return fmt.Errorf("sqlite: append session: %w", err)
	}
	stmt := tx.StmtContext(ctx, s.insertMessage)
	for i, m := range enc {
		if _, err := stmt.ExecContext(ctx, sessionID, after+i, m); err != nil {
			return fmt.Errorf("sqlite: append session: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: append session: commit: %w", err)
	}
	return nil
}

func conflict(sessionID string, want, have int) error {
	return fmt.Errorf("sqlite: session %q changed concurrently (expected %d messages, found %d): %w",
		sessionID, want, have, runlet.ErrConflict)
}

// GetState implements [runlet.StateStore].
func (s *Store) GetState(ctx context.Context, sessionID, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: get state: %w", err)
	}
	var v []byte
	var size int64
	err := s.rdb.QueryRowContext(ctx, `SELECT octet_length(value), CASE WHEN octet_length(value) <= ? THEN value END
		FROM runlet_state WHERE session_id = ? AND key = ?`, s.limits.RowBytes, sessionID, key).Scan(&size, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: state %q of session %q: %w", key, sessionID, runlet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get state: %w", err)
	}
	if err := s.limits.Row(storerow.State(sessionID, key), size); err != nil {
		return nil, fmt.Errorf("sqlite: get state: %w", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// SetState implements [runlet.StateStore].
func (s *Store) SetState(ctx context.Context, sessionID, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: set state: %w", err)
	}
	if err := s.limits.Row(storerow.State(sessionID, key), int64(len(value))); err != nil {
		return fmt.Errorf("sqlite: set state: %w", err)
	}
	if value == nil {
		value = []byte{}
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO runlet_state (session_id, key, value, updated_at) VALUES (?, ?, ?, `+now+`)
		ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		sessionID, key, value)
	if err != nil {
		return fmt.Errorf("sqlite: set state: %w", err)
	}
	return nil
}

// DeleteState implements [runlet.StateStore]. Deleting a missing key is not
// an error.
func (s *Store) DeleteState(ctx context.Context, sessionID, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: delete state: %w", err)
	}
	if _, err := s.wdb.ExecContext(ctx, `DELETE FROM runlet_state WHERE session_id = ? AND key = ?`, sessionID, key); err != nil {
		return fmt.Errorf("sqlite: delete state: %w", err)
	}
	return nil
}

// SaveCheckpoint implements [runlet.CheckpointStore]. It replaces an earlier
// checkpoint of the same run.
func (s *Store) SaveCheckpoint(ctx context.Context, cp *runlet.Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: save checkpoint: %w", err)
	}
	if cp == nil || cp.RunID == "" {
		return errors.New("sqlite: save checkpoint: checkpoint without a run ID")
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("sqlite: save checkpoint %q: encode: %w", cp.RunID, err)
	}
	if err := s.limits.Row(storerow.Checkpoint(cp.RunID), int64(len(data))); err != nil {
		return fmt.Errorf("sqlite: save checkpoint: %w", err)
	}
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO runlet_checkpoints (run_id, session_id, checkpoint, saved_at) VALUES (?, ?, ?, `+now+`)
		ON CONFLICT (run_id) DO UPDATE SET session_id = excluded.session_id, checkpoint = excluded.checkpoint, saved_at = excluded.saved_at`,
		cp.RunID, cp.SessionID, string(data))
	if err != nil {
		return fmt.Errorf("sqlite: save checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint implements [runlet.CheckpointStore].
func (s *Store) LoadCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load checkpoint: %w", err)
	}
	var data sql.RawBytes
	var size int64
	rows, err := s.rdb.QueryContext(ctx, `SELECT octet_length(checkpoint), CASE WHEN octet_length(checkpoint) <= ? THEN checkpoint END
		FROM runlet_checkpoints WHERE run_id = ?`, s.limits.RowBytes, runID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load checkpoint: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: load checkpoint: %w", err)
		}
		return nil, notFound(runID)
	}
	if err := rows.Scan(&size, &data); err != nil {
		return nil, fmt.Errorf("sqlite: load checkpoint: %w", err)
	}
	if err := s.limits.Row(storerow.Checkpoint(runID), size); err != nil {
		return nil, fmt.Errorf("sqlite: load checkpoint: %w", err)
	}
	return decodeCheckpoint(runID, data)
}

// ClaimCheckpoint implements [runlet.CheckpointStore]: it deletes the
// checkpoint and returns it in one transaction, so of several concurrent
// claims exactly one gets it. A checkpoint that does not decode is left in
// place.
func (s *Store) ClaimCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim checkpoint: %w", err)
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim checkpoint: %w", err)
	}
	defer tx.Rollback()
	// A checkpoint over the limit is refused unread, and stays: the
	// transaction rolls back.
	var data []byte
	var size int64
	err = tx.QueryRowContext(ctx, `DELETE FROM runlet_checkpoints WHERE run_id = ?
		RETURNING octet_length(checkpoint), CASE WHEN octet_length(checkpoint) <= ? THEN checkpoint END`, runID, s.limits.RowBytes).Scan(&size, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(runID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim checkpoint: %w", err)
	}
	if err := s.limits.Row(storerow.Checkpoint(runID), size); err != nil {
		return nil, fmt.Errorf("sqlite: claim checkpoint: %w", err)
	}
	cp, err := decodeCheckpoint(runID, data)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: claim checkpoint: commit: %w", err)
	}
	return cp, nil
}

// DeleteCheckpoint implements [runlet.CheckpointStore]. Deleting a missing
// checkpoint is not an error.
func (s *Store) DeleteCheckpoint(ctx context.Context, runID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: delete checkpoint: %w", err)
	}
	if _, err := s.wdb.ExecContext(ctx, `DELETE FROM runlet_checkpoints WHERE run_id = ?`, runID); err != nil {
		return fmt.Errorf("sqlite: delete checkpoint: %w", err)
	}
	return nil
}

func notFound(runID string) error {
	return fmt.Errorf("sqlite: checkpoint of run %q: %w", runID, runlet.ErrNotFound)
}

func decodeCheckpoint(runID string, data []byte) (*runlet.Checkpoint, error) {
	cp := new(runlet.Checkpoint)
	if err := json.Unmarshal(data, cp); err != nil {
		return nil, fmt.Errorf("sqlite: %w", &runlet.CheckpointError{RunID: runID, Reason: "it does not decode", Err: err})
	}
	return cp, nil
}
