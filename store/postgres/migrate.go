package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema changes, in order; migrations[i] takes the
// schema from version i to i+1. {p} stands for the schema prefix ("" or
// "name."). Append to this list; never edit an entry that has been released.
var migrations = []string{
	// 1: sessions, messages, state, checkpoints.
	`
CREATE TABLE {p}runlet_sessions (
	id         text PRIMARY KEY,
	length     integer NOT NULL,  -- number of messages; the optimistic-concurrency check
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE {p}runlet_messages (
	session_id text NOT NULL REFERENCES {p}runlet_sessions (id) ON DELETE CASCADE,
	seq        integer NOT NULL,  -- 0-based position in the session
	message    bytea NOT NULL,    -- JSON of runlet.Message, exactly as encoded
	PRIMARY KEY (session_id, seq)
);
CREATE TABLE {p}runlet_state (
	session_id text NOT NULL,
	key        text NOT NULL,
	value      bytea NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (session_id, key)
);
CREATE TABLE {p}runlet_checkpoints (
	run_id     text PRIMARY KEY,
	session_id text NOT NULL,
	checkpoint bytea NOT NULL,    -- JSON of runlet.Checkpoint, exactly as encoded
	saved_at   timestamptz NOT NULL DEFAULT now()
);
`,
}

// SchemaVersion is the schema version this package writes.
func SchemaVersion() int { return len(migrations) }

// lockKey is the advisory lock that serialises migrators of one schema.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("github.com/runlet/runlet/store/postgres\x00" + schema))
	return int64(h.Sum64())
}

// migrate brings the schema to SchemaVersion in one transaction holding an
// advisory lock, so instances starting together apply each migration once,
// and a failed migration changes nothing.
func (s *Store) migrate(ctx context.Context, prefix string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(s.schema)); err != nil {
			return err
		}
		if s.schema != "" {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{s.schema}.Sanitize()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+prefix+`runlet_schema_version (version integer NOT NULL)`); err != nil {
			return err
		}
		var version int
		err := tx.QueryRow(ctx, `SELECT version FROM `+prefix+`runlet_schema_version`).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, `INSERT INTO `+prefix+`runlet_schema_version (version) VALUES (0)`)
		}
		if err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("%w: version %d, this package knows up to %d", ErrSchemaTooNew, version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			// No arguments: the simple protocol, which runs several statements.
			if _, err := tx.Exec(ctx, strings.ReplaceAll(migrations[v], "{p}", prefix)); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if version < len(migrations) {
			if _, err := tx.Exec(ctx, `UPDATE `+prefix+`runlet_schema_version SET version = $1`, len(migrations)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrSchemaTooNew) {
			return err
		}
		return fmt.Errorf("postgres: open: %w", err)
	}
	return nil
}
