package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const defaultDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	reachOnce sync.Once
	reachErr  error
)

// testDSN returns the server's DSN from $RUNLET_POSTGRES_DSN (or the
// default). When no server answers it skips the test — or, under CI, fails
// it, so that CI cannot pass by skipping.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("RUNLET_POSTGRES_DSN")
	if dsn == "" {
		dsn = defaultDSN
	}
	reachOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			reachErr = err
			return
		}
		reachErr = conn.Ping(ctx)
		conn.Close(ctx)
	})
	if reachErr != nil {
		msg := "no PostgreSQL server reachable (set RUNLET_POSTGRES_DSN, or run .ci/postgres.sh as root): " + reachErr.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// testSchema returns a schema name unique to this test, dropped at its end,
// so that concurrent test runs and packages never share tables.
func testSchema(t testing.TB) string {
	t.Helper()
	dsn := testDSN(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "runlet_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

// open opens a Store in schema, closed at the end of the test.
func open(t testing.TB, schema string) *Store {
	t.Helper()
	s, err := Open(context.Background(), testDSN(t), WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestContract(t *testing.T) {
	s := open(t, testSchema(t))
	storetest.Run(t, func(t *testing.T) runlet.Store { return s })
}

// TestContractTwoInstances runs the suite over two Stores with pools of
// their own, as two application instances sharing the database.
func TestContractTwoInstances(t *testing.T) {
	schema := testSchema(t)
	a, b := open(t, schema), open(t, schema)
	storetest.Run(t, func(t *testing.T) runlet.Store { return storetest.Alternate(a, b) })
}

func TestNewKeepsCallersPool(t *testing.T) {
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := New(ctx, pool, WithSchema(testSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pool() != pool {
		t.Fatal("Pool() is not the pool given to New")
	}
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("Close closed the caller's pool: %v", err)
	}
	if _, err := New(ctx, nil); err == nil {
		t.Fatal("New(nil pool) succeeded")
	}
}

// TestSearchPathSchema checks the default placement: without WithSchema
// the tables go to the first schema of the search_path.
func TestSearchPathSchema(t *testing.T) {
	ctx := t.Context()
	schema := testSchema(t)
	admin := open(t, schema) // creates the schema
	cfg, err := pgxpool.ParseConfig(testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendSession(ctx, "via-search-path", 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	// The schema-qualified store sees it: same tables.
	msgs, err := admin.LoadSession(ctx, "via-search-path")
	if err != nil || len(msgs) != 1 {
		t.Fatalf("message written through search_path not found in schema %s: %v, %v", schema, msgs, err)
	}
}

func BenchmarkStore(b *testing.B) {
	schema := testSchema(b)
	storetest.Benchmark(b, func(b *testing.B) runlet.Store { return open(b, schema) })
}
