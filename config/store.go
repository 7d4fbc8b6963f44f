package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/secret"
)

// Store is the store section: where sessions, their key-value state and
// the checkpoints of interrupted runs live. In YAML it is memory, or a
// mapping with exactly one of sqlite, postgres and redis:
//
//	store: memory                   # in the process (runlet.NewMemoryStore)
//	store:
//	  sqlite: {path: sessions.db}   # a file (store/sqlite)
//	store:
//	  postgres: {dsn: "${DATABASE_URL}", schema: runlet}  # store/postgres
//	store:
//	  redis: {url: "${REDIS_URL}", prefix: "myapp:", ttl: 720h}  # store/redis
//
// The DSN and URL are credentials: they may read any environment variable
// and print masked. Setup.OpenStore opens the store, through the Loader's
// StoreOpeners for the durable kinds.
type Store struct {
	// Memory keeps everything in the process, lost when it ends: the YAML
	// scalar memory.
	Memory bool `yaml:"-"`
	// SQLite is a SQLite file.
	SQLite *SQLiteStore `yaml:"sqlite"`
	// Postgres is a PostgreSQL database.
	Postgres *PostgresStore `yaml:"postgres"`
	// Redis is a Redis server.
	Redis *RedisStore `yaml:"redis"`
}

// SQLiteStore is store.sqlite.
type SQLiteStore struct {
	// Path is the database file, relative to the working directory; it is
	// created (0600) if missing.
	Path string `yaml:"path"`
}

// PostgresStore is store.postgres.
type PostgresStore struct {
	// DSN is the connection string, a URL (postgres://user:pass@host/db)
	// or key=value pairs; write the password as ${VAR}.
	DSN string `yaml:"dsn" config:"credential"`
	// Schema holds the tables; empty means the default (public).
	Schema string `yaml:"schema"`
}

// RedisStore is store.redis.
type RedisStore struct {
	// URL is the server, such as redis://:password@localhost:6379/0 or
	// rediss:// for TLS; write the password as ${VAR}.
	URL string `yaml:"url" config:"credential"`
	// Prefix starts every key, so that several applications can share a
	// Redis.
	Prefix string `yaml:"prefix"`
	// TTL, if set, expires sessions and checkpoints not written for
	// that long.
	TTL time.Duration `yaml:"ttl"`
}

// Kind names the store the section describes: "memory", "sqlite",
// "postgres", "redis", or "" when there is none.
func (s Store) Kind() string {
	switch {
	case s.Memory:
		return "memory"
	case s.SQLite != nil:
		return "sqlite"
	case s.Postgres != nil:
		return "postgres"
	case s.Redis != nil:
		return "redis"
	}
	return ""
}

// StoreOpeners open the durable stores a config's store section may name,
// one func per kind. A program sets those it links, so that a program that
// uses none does not build the database drivers (the runlet CLI sets them
// all); a file naming a kind without an opener is an *Error. memory needs
// no opener. An opener that returns a store with a Close method (with or
// without an error result) hands it to Setup.OpenStore's Closer.
//
//	loader.Stores.SQLite = func(ctx context.Context, c config.SQLiteStore) (runlet.Store, error) {
//		return sqlite.Open(ctx, c.Path)
//	}
type StoreOpeners struct {
	SQLite   func(ctx context.Context, c SQLiteStore) (runlet.Store, error)
	Postgres func(ctx context.Context, c PostgresStore) (runlet.Store, error)
	Redis    func(ctx context.Context, c RedisStore) (runlet.Store, error)
}

// kinds lists the store kinds o can open.
func (o StoreOpeners) kinds() []string {
	k := []string{"memory"}
	if o.SQLite != nil {
		k = append(k, "sqlite")
	}
	if o.Postgres != nil {
		k = append(k, "postgres")
	}
	if o.Redis != nil {
		k = append(k, "redis")
	}
	return k
}

// validateStore checks that the store section names one kind, with what
// it needs, that the Loader can open.
func (l *Loader) validateStore(f *File, bad fieldSet) []error {
	s := f.Store
	if bad.under("store") {
		return nil
	}
	n := 0
	for _, set := range []bool{s.Memory, s.SQLite != nil, s.Postgres != nil, s.Redis != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return nil
	case n > 1:
		return []error{f.errAt("store", "", "names more than one store; keep one of sqlite, postgres and redis")}
	}
	kind := s.Kind()
	field := "store." + kind
	var errs []error
	switch {
	case s.SQLite != nil && s.SQLite.Path == "":
		errs = append(errs, f.errAt(field, "", "path is required: sqlite: {path: sessions.db}"))
	case s.Postgres != nil && s.Postgres.DSN == "":
		errs = append(errs, f.errAt(field, "", "dsn is required: postgres: {dsn: \"${DATABASE_URL}\"}"))
	case s.Redis != nil && s.Redis.URL == "":
		errs = append(errs, f.errAt(field, "", "url is required: redis: {url: \"${REDIS_URL}\"}"))
	}
	if kind != "memory" && !slices.Contains(l.Stores.kinds(), kind) {
		errs = append(errs, f.errAt(field, "", "this program cannot open a %s store (it can open: %s); in Go, set Loader.Stores", kind, list(l.Stores.kinds())))
	}
	return errs
}

// OpenStore opens the store the config's store section names, through the
// Loader's StoreOpeners, and adds it to the setup's runtime options
// (runlet.WithStore) and Store field; with no store section it does
// nothing. Close the returned Closer when done with the runtime. An error
// names the section but not its DSN or URL.
func (s *Setup) OpenStore(ctx context.Context) (io.Closer, error) {
	c := s.File.Store
	var st runlet.Store
	var err error
	switch kind := c.Kind(); {
	case kind == "":
		return storeCloser{}, nil
	case kind == "memory":
		st = runlet.NewMemoryStore()
	case kind == "sqlite" && s.stores.SQLite != nil:
		st, err = s.stores.SQLite(ctx, *c.SQLite)
	case kind == "postgres" && s.stores.Postgres != nil:
		st, err = s.stores.Postgres(ctx, *c.Postgres)
	case kind == "redis" && s.stores.Redis != nil:
		st, err = s.stores.Redis(ctx, *c.Redis)
	default:
		return nil, fmt.Errorf("config: store.%s: this program cannot open a %s store; set Loader.Stores", kind, kind)
	}
	if err == nil && st == nil {
		err = errors.New("the opener returned no store")
	}
	if err != nil {
		return nil, fmt.Errorf("config: store.%s: %w", c.Kind(), err)
	}
	s.Store = st
	s.RuntimeOptions = append(s.RuntimeOptions, runlet.WithStore(st))
	return storeCloser{st}, nil
}

// storeCloser closes a store that has a Close method.
type storeCloser struct{ st runlet.Store }

func (c storeCloser) Close() error {
	switch st := c.st.(type) {
	case interface{ Close() error }:
		return st.Close()
	case interface{ Close() }:
		st.Close()
	}
	return nil
}

// Printing a PostgresStore or RedisStore masks its DSN or URL, as File,
// Model and MCPServer mask their credentials (so does printing a File or
// Store, which hold them).
type (
	plainPostgresStore PostgresStore
	plainRedisStore    RedisStore
)

func (p PostgresStore) masked() PostgresStore {
	p.DSN = maskDSN(p.DSN)
	return p
}

func (r RedisStore) masked() RedisStore {
	r.URL = secret.URL(r.URL)
	return r
}

// maskDSN masks a PostgreSQL connection string: a URL as secret.URL does,
// key=value pairs whole (the password may be any of them, or a service
// file's).
func maskDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return secret.URL(dsn)
	}
	return secret.String(dsn)
}

// Format prints p with its DSN masked, for every verb.
func (p PostgresStore) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "config.PostgresStore", plainPostgresStore(p.masked()))
}

// LogValue is p with its DSN masked.
func (p PostgresStore) LogValue() slog.Value { return slog.AnyValue(plainPostgresStore(p.masked())) }

// MarshalJSON encodes p with its DSN masked.
func (p PostgresStore) MarshalJSON() ([]byte, error) {
	return json.Marshal(plainPostgresStore(p.masked()))
}

// Format prints r with its URL masked, for every verb.
func (r RedisStore) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "config.RedisStore", plainRedisStore(r.masked()))
}

// LogValue is r with its URL masked.
func (r RedisStore) LogValue() slog.Value { return slog.AnyValue(plainRedisStore(r.masked())) }

// MarshalJSON encodes r with its URL masked.
func (r RedisStore) MarshalJSON() ([]byte, error) { return json.Marshal(plainRedisStore(r.masked())) }
