package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

func mustOpen(t *testing.T, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return s
}

func schemaVersion(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	if err := s.rdb.QueryRow(`SELECT version FROM runlet_schema_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// withMigrations runs f with the package's migration list replaced.
func withMigrations(t *testing.T, m []string, f func()) {
	saved := migrations
	migrations = m
	defer func() { migrations = saved }()
	f()
}

func TestPragmas(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "p.db"))
	defer s.Close()
	for _, c := range []struct {
		db    *sql.DB
		query string
		want  string
	}{
		{s.wdb, "PRAGMA journal_mode", "wal"},
		{s.rdb, "PRAGMA journal_mode", "wal"},
		{s.wdb, "PRAGMA foreign_keys", "1"},
		{s.rdb, "PRAGMA foreign_keys", "1"},
		{s.wdb, "PRAGMA synchronous", "2"}, // FULL
		{s.wdb, "PRAGMA busy_timeout", "5000"},
		{s.rdb, "PRAGMA busy_timeout", "5000"},
		{s.rdb, "PRAGMA query_only", "1"},
		{s.wdb, "PRAGMA query_only", "0"},
	} {
		var got string
		if err := c.db.QueryRow(c.query).Scan(&got); err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got != c.want {
			t.Errorf("%s = %q; want %q", c.query, got, c.want)
		}
	}
	// Foreign keys are enforced: a message needs its session.
	_, err := s.wdb.Exec(`INSERT INTO runlet_messages (session_id, seq, message) VALUES ('nope', 0, '{}')`)
	if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Fatalf("inserting an orphan message: %v; want a foreign key error", err)
	}

	n := mustOpen(t, filepath.Join(t.TempDir(), "n.db"), WithSynchronous("normal"), WithBusyTimeout(250*time.Millisecond))
	defer n.Close()
	var sync, busy string
	n.wdb.QueryRow("PRAGMA synchronous").Scan(&sync)
	n.wdb.QueryRow("PRAGMA busy_timeout").Scan(&busy)
	if sync != "1" || busy != "250" {
		t.Fatalf("synchronous=%s busy_timeout=%s; want 1 (NORMAL), 250", sync, busy)
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), WithSynchronous("sometimes")); err == nil {
		t.Fatal("Open with an invalid synchronous mode succeeded")
	}
	if _, err := Open(context.Background(), ""); err == nil {
		t.Fatal("Open with an empty path succeeded")
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	s := mustOpen(t, path)
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("hello")}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetState(ctx, "s", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "r", Turn: 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s = mustOpen(t, path)
		if v := schemaVersion(t, s); v != SchemaVersion() {
			t.Fatalf("schema version %d; want %d", v, SchemaVersion())
		}
		msgs, err := s.LoadSession(ctx, "s")
		if err != nil || len(msgs) != 1 || msgs[0].Text() != "hello" {
			t.Fatalf("after reopen: %v, %v", msgs, err)
		}
		if v, err := s.GetState(ctx, "s", "k"); err != nil || string(v) != "v" {
			t.Fatalf("state after reopen: %q, %v", v, err)
		}
		if cp, err := s.LoadCheckpoint(ctx, "r"); err != nil || cp.Turn != 2 {
			t.Fatalf("checkpoint after reopen: %+v, %v", cp, err)
		}
		s.Close()
	}
}

// Stores opened at once on a new file all open: SQLite may refuse the
// switch to WAL mode or the first write lock at once (SQLITE_BUSY without
// the busy handler), which Open retries. Ten new files, to meet it often.
func TestConcurrentOpen(t *testing.T) {
	for round := range 10 {
		testConcurrentOpen(t, filepath.Join(t.TempDir(), fmt.Sprintf("c%d.db", round)))
	}
}

func testConcurrentOpen(t *testing.T, path string) {
	const n = 8
	var wg sync.WaitGroup
	stores := make([]*Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(context.Background(), path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		if v := schemaVersion(t, stores[i]); v != SchemaVersion() {
			t.Errorf("store %d sees schema version %d", i, v)
		}
		stores[i].Close()
	}
}

func TestMigrateFromOlderSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")

	// A file that already holds an application's own table, at version 0.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE app_users (name TEXT); INSERT INTO app_users VALUES ('ada')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Version 1 of the schema, with data in it.
	s := mustOpen(t, path)
	if v := schemaVersion(t, s); v != len(migrations) {
		t.Fatalf("version %d after the first open", v)
	}
	var name string
	if err := s.rdb.QueryRow(`SELECT name FROM app_users`).Scan(&name); err != nil || name != "ada" {
		t.Fatalf("application table after migration: %q, %v", name, err)
	}
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("one"), runlet.AssistantText("two")}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// A later release adds a migration: opening the old file applies it,
	// keeps the data, and the store works.
	next := append(append([]string(nil), migrations...),
		`ALTER TABLE runlet_sessions ADD COLUMN title TEXT NOT NULL DEFAULT '';
		 UPDATE runlet_sessions SET title = 'untitled';`)
	withMigrations(t, next, func() {
		s := mustOpen(t, path)
		defer s.Close()
		if v := schemaVersion(t, s); v != len(next) {
			t.Fatalf("version %d after upgrade; want %d", v, len(next))
		}
		var title string
		if err := s.rdb.QueryRow(`SELECT title FROM runlet_sessions WHERE id = 's'`).Scan(&title); err != nil || title != "untitled" {
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

	// Now the file is newer than this package: refuse it.
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("opening a newer schema: %v; want ErrSchemaTooNew", err)
	}
}

func TestFailedMigrationChangesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	s := mustOpen(t, path)
	s.Close()
	bad := append(append([]string(nil), migrations...),
		`CREATE TABLE runlet_half (x INTEGER); THIS IS NOT SQL;`)
	withMigrations(t, bad, func() {
		if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("Open with a broken migration: %v; want an error naming version 2", err)
		}
	})
	s = mustOpen(t, path)
	defer s.Close()
	if v := schemaVersion(t, s); v != len(migrations) {
		t.Fatalf("version %d after a failed migration; want %d", v, len(migrations))
	}
	var n int
	s.rdb.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'runlet_half'`).Scan(&n)
	if n != 0 {
		t.Fatal("a failed migration left a table behind")
	}
}

// TestWriteQueueHonoursContext holds the write connection and checks that a
// write waiting for it gives up at its deadline and writes nothing.
func TestWriteQueueHonoursContext(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "q.db"))
	defer s.Close()
	conn, err := s.wdb.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("x")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AppendSession behind a busy writer: %v; want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 30*time.Second { // a hang guard: the writer stays busy
		t.Fatalf("took %v to give up", d)
	}
	if err := s.SetState(ctx, "s", "k", []byte("v")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SetState after the deadline: %v", err)
	}
	// Reads go on while the writer is busy.
	if _, err := s.LoadSession(context.Background(), "s"); err != nil {
		t.Fatalf("LoadSession while the writer is held: %v", err)
	}
	conn.Close()
	msgs, err := s.LoadSession(context.Background(), "s")
	if err != nil || len(msgs) != 0 {
		t.Fatalf("after a timed-out append: %v, %v", msgs, err)
	}
}
