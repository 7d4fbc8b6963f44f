package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	msqlite "modernc.org/sqlite"
)

// migrations are the schema changes, in order; migrations[i] takes the
// schema from version i to i+1. Append to this list; never edit an entry that
// has been released.
var migrations = []string{
	// 1: sessions, messages, state, checkpoints.
	`
CREATE TABLE runlet_sessions (
	id         TEXT PRIMARY KEY,
	length     INTEGER NOT NULL,  -- number of messages; the optimistic-concurrency check
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE TABLE runlet_messages (
	session_id TEXT NOT NULL REFERENCES runlet_sessions (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,  -- 0-based position in the session
	message    TEXT NOT NULL,     -- JSON of runlet.Message
	PRIMARY KEY (session_id, seq)
);
CREATE TABLE runlet_state (
	session_id TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      BLOB NOT NULL,
	updated_at TEXT NOT NULL,
	PRIMARY KEY (session_id, key)
);
CREATE TABLE runlet_checkpoints (
	run_id     TEXT PRIMARY KEY,
	session_id TEXT NOT NULL,
	checkpoint TEXT NOT NULL,     -- JSON of runlet.Checkpoint
	saved_at   TEXT NOT NULL
);
`,
}

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int { return len(migrations) }

// migrateRetrying runs migrate, again while SQLite answers SQLITE_BUSY, for
// up to timeout. When several connections open a new file at once, setting
// up a connection (the switch to WAL mode) or its first write lock can be
// refused at once, without going through the busy handler; the next try
// finds the file set up.
func (s *Store) migrateRetrying(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		err := s.migrate(ctx)
		if err == nil || !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (or an extended code
// of it).
func isBusy(err error) bool {
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 5 // SQLITE_BUSY
}

// migrate brings the schema to SchemaVersion in one write transaction, so
// concurrent openers (other Stores, other processes) apply each migration
// once, and a crash mid-way leaves the old version intact.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.wdb.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS runlet_schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	var version int
	err = tx.QueryRowContext(ctx, `SELECT version FROM runlet_schema_version`).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, `INSERT INTO runlet_schema_version (version) VALUES (0)`)
	}
	if err != nil {
		return fmt.Errorf("sqlite: open %s: read schema version: %w", s.path, err)
	}
	if version > len(migrations) {
		return fmt.Errorf("%w: %s has version %d, this package knows up to %d", ErrSchemaTooNew, s.path, version, len(migrations))
	}
	if version == len(migrations) {
		return nil // nothing to do; the rollback ends the transaction
	}
	for v := version; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("sqlite: open %s: migrate schema to version %d: %w", s.path, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runlet_schema_version SET version = ?`, len(migrations)); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: open %s: commit migrations: %w", s.path, err)
	}
	return nil
}
