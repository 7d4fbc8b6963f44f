package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/runlet/runlet"
)

// withMigrations runs f with the package's migration list replaced.
func withMigrations(m []string, f func()) {
	saved := migrations
	migrations = m
	defer func() { migrations = saved }()
	f()
}

func schemaVersion(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	q := `SELECT version FROM ` + pgx.Identifier{s.schema}.Sanitize() + `.runlet_schema_version`
	if err := s.pool.QueryRow(context.Background(), q).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestConcurrentMigrators(t *testing.T) {
	schema := testSchema(t)
	const n = 8
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(context.Background(), testDSN(t), WithSchema(schema)) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		if v := schemaVersion(t, stores[i]); v != SchemaVersion() {
			t.Errorf("store %d: schema version %d; want %d", i, v, SchemaVersion())
		}
		stores[i].Close()
	}
}

func TestMigrateFromOlderSchema(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := open(t, schema)
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("one"), runlet.AssistantText("two")}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	next := append(append([]string(nil), migrations...),
		`ALTER TABLE {p}runlet_sessions ADD COLUMN title text NOT NULL DEFAULT '';
		 UPDATE {p}runlet_sessions SET title = 'untitled';`)
	withMigrations(next, func() {
		s := open(t, schema)
		if v := schemaVersion(t, s); v != len(next) {
			t.Fatalf("version %d after upgrade; want %d", v, len(next))
		}
		var title string
		q := `SELECT title FROM ` + pgx.Identifier{schema}.Sanitize() + `.runlet_sessions WHERE id = 's'`
		if err := s.pool.QueryRow(ctx, q).Scan(&title); err != nil || title != "untitled" {
			t.Fatalf("migrated column: %q, %v", title, err)
		}
		if err := s.AppendSession(ctx, "s", 2, []runlet.Message{runlet.UserText("three")}); err != nil {
			t.Fatal(err)
		}
		msgs, err := s.LoadSession(ctx, "s")
		if err != nil || len(msgs) != 3 || msgs[0].Text() != "one" || msgs[2].Text() != "three" {
			t.Fatalf("session after upgrade: %v, %v", msgs, err)
		}
	})

	// The database is now newer than this package: refuse it.
	if _, err := Open(ctx, testDSN(t), WithSchema(schema)); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("opening a newer schema: %v; want ErrSchemaTooNew", err)
	}
}

func TestFailedMigrationChangesNothing(t *testing.T) {
	schema := testSchema(t)
	open(t, schema).Close()
	bad := append(append([]string(nil), migrations...),
		`CREATE TABLE {p}runlet_half (x integer); THIS IS NOT SQL;`)
	withMigrations(bad, func() {
		_, err := Open(context.Background(), testDSN(t), WithSchema(schema))
		if err == nil || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("Open with a broken migration: %v; want an error naming version 2", err)
		}
	})
	s := open(t, schema)
	if v := schemaVersion(t, s); v != len(migrations) {
		t.Fatalf("version %d after a failed migration; want %d", v, len(migrations))
	}
	var n int
	s.pool.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'runlet_half'`, schema).Scan(&n)
	if n != 0 {
		t.Fatal("a failed migration left a table behind")
	}
}

// TestBlockedAppendHonoursContext holds the session's row lock in another
// transaction: an append waiting on it gives up at its deadline and writes
// nothing; once the lock is released, the stale append conflicts.
func TestBlockedAppendHonoursContext(t *testing.T) {
	ctx := context.Background()
	s := open(t, testSchema(t))
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("one")}); err != nil {
		t.Fatal(err)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `UPDATE `+pgx.Identifier{s.schema}.Sanitize()+`.runlet_sessions SET length = length WHERE id = 's'`); err != nil {
		t.Fatal(err)
	}

	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.AppendSession(tctx, "s", 1, []runlet.Message{runlet.UserText("two")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AppendSession behind a row lock: %v; want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 30*time.Second { // a hang guard: the lock is held until the test ends
		t.Fatalf("took %v to give up", d)
	}
	// Another writer's append, in the transaction, then commits.
	if _, err := tx.Exec(ctx, `UPDATE `+pgx.Identifier{s.schema}.Sanitize()+`.runlet_sessions SET length = 2 WHERE id = 's'`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+pgx.Identifier{s.schema}.Sanitize()+`.runlet_messages (session_id, seq, message) VALUES ('s', 1, $1)`,
		`{"role":"user","parts":[{"type":"text","text":"other"}]}`); err != nil {
		t.Fatal(err)
	}
	// A writer blocked on the lock now waits for the commit, then conflicts.
	done := make(chan error, 1)
	go func() { done <- s.AppendSession(ctx, "s", 1, []runlet.Message{runlet.UserText("two")}) }()
	time.Sleep(100 * time.Millisecond)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, runlet.ErrConflict) {
		t.Fatalf("append blocked behind a committed append: %v; want ErrConflict", err)
	}
	msgs, err := s.LoadSession(ctx, "s")
	if err != nil || len(msgs) != 2 || msgs[1].Text() != "other" {
		t.Fatalf("session: %v, %v", msgs, err)
	}
}

func TestErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const secret = "s3cret-Pa55word"
	for _, dsn := range []string{
		"postgres://app:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"host=127.0.0.1 port=1 user=app password=" + secret + " connect_timeout=2 sslmode=disable",
		"postgres://app:" + secret + "@127.0.0.1:1/db?sslmode=bogus",
		"host=127.0.0.1 port=notaport password=" + secret,
	} {
		_, err := Open(ctx, dsn)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", dsn)
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error reveals the password: %v", err)
		}
	}
}
