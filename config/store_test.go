package config_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/runlettest"
)

const storeModel = "model: {provider: openai, name: m, api_key: k}\n"

// closingStore is a memory store that counts its Close calls.
type closingStore struct {
	runlet.Store
	closed *int
}

func (s closingStore) Close() error { *s.closed++; return nil }

// storeLoader's openers record what they were given and open memory
// stores.
func storeLoader(got *[]any, closed *int, kv ...string) *config.Loader {
	open := func(c any) (runlet.Store, error) {
		*got = append(*got, c)
		return closingStore{runlet.NewMemoryStore(), closed}, nil
	}
	return &config.Loader{
		LookupEnv: env(kv...),
		Stores: config.StoreOpeners{
			SQLite:   func(_ context.Context, c config.SQLiteStore) (runlet.Store, error) { return open(c) },
			Postgres: func(_ context.Context, c config.PostgresStore) (runlet.Store, error) { return open(c) },
			Redis:    func(_ context.Context, c config.RedisStore) (runlet.Store, error) { return open(c) },
		},
	}
}

// Each store kind decodes into its section and reaches its opener; DSN
// and URL may read any variable.
func TestStoreKinds(t *testing.T) {
	for _, tc := range []struct {
		yaml, kind string
		want       any
	}{
		{"store:\n  sqlite: {path: s.db}\n", "sqlite", config.SQLiteStore{Path: "s.db"}},
		{"store:\n  postgres: {dsn: \"postgres://app:${PGPASS}@127.0.0.1/app\", schema: agents}\n", "postgres",
			config.PostgresStore{DSN: "postgres://app:pw@127.0.0.1/app", Schema: "agents"}},
		{"store:\n  redis:\n    url: redis://:${PGPASS}@127.0.0.1:6379/2\n    prefix: \"app:\"\n    ttl: 720h\n", "redis",
			config.RedisStore{URL: "redis://:pw@127.0.0.1:6379/2", Prefix: "app:", TTL: 720 * time.Hour}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var got []any
			closed := 0
			setup, err := storeLoader(&got, &closed, "PGPASS", "pw").Load(writeTemp(t, "s.yaml", storeModel+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if k := setup.File.Store.Kind(); k != tc.kind {
				t.Errorf("kind = %q", k)
			}
			c, err := setup.OpenStore(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != tc.want || setup.Store == nil {
				t.Errorf("opened with %#v, want %#v", got, tc.want)
			}
			if err := c.Close(); err != nil || closed != 1 {
				t.Errorf("Close: %v, %d closes", err, closed)
			}
		})
	}
}

// store: memory keeps a session across runs of the setup's runtime, and
// needs no opener.
func TestStoreMemory(t *testing.T) {
	l := &config.Loader{}
	setup, err := l.Load(writeTemp(t, "m.yaml", storeModel+"store: memory\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := setup.OpenStore(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	model := runlettest.NewModel(runlettest.TextReply("noted"), runlettest.TextReply("3pm"))
	setup.Agent.Model = model
	rt := setup.NewRuntime()
	for _, q := range []string{"The meeting is at 3pm.", "When is it?"} {
		if _, err := rt.Run(t.Context(), setup.Agent, q, runlet.WithSession("s1")); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(model.Requests()[1].Messages); n != 3 {
		t.Errorf("the second run saw %d messages, want the session's 2 and its own", n)
	}
	msgs, err := setup.Store.LoadSession(t.Context(), "s1")
	if err != nil || len(msgs) != 4 {
		t.Errorf("stored %d messages, %v", len(msgs), err)
	}
}

// Without a store section OpenStore does nothing.
func TestStoreNone(t *testing.T) {
	setup, err := (&config.Loader{}).Load(writeTemp(t, "n.yaml", storeModel))
	if err != nil {
		t.Fatal(err)
	}
	c, err := setup.OpenStore(t.Context())
	if err != nil || c.Close() != nil || setup.Store != nil || len(setup.RuntimeOptions) != 0 {
		t.Errorf("OpenStore = %v, store %v, %d options", err, setup.Store, len(setup.RuntimeOptions))
	}
}

// Mistakes in the store section are *Errors at the file's line.
func TestStoreErrors(t *testing.T) {
	var got []any
	closed := 0
	full := storeLoader(&got, &closed, "PGPASS", "pw")
	for _, tc := range []struct {
		name, yaml, want string
		loader           *config.Loader
	}{
		{"misspelt memory", "store: memroy\n", `s.yaml:2:8: store: want memory, or a mapping with one of sqlite: {path: FILE}, postgres: {dsn: ...} and redis: {url: ...}; got "memroy"; did you mean "memory"?`, full},
		{"unknown kind", "store:\n  mysql: {dsn: x}\n", `s.yaml:3:3: store.mysql: unknown field (known in store: postgres, redis and sqlite)`, full},
		{"two kinds", "store:\n  sqlite: {path: a}\n  redis: {url: redis://127.0.0.1}\n", `s.yaml:3:3: store: names more than one store; keep one of sqlite, postgres and redis`, full},
		{"no path", "store:\n  sqlite: {}\n", `s.yaml:3:11: store.sqlite: path is required`, full},
		{"no dsn", "store:\n  postgres: {schema: x}\n", `s.yaml:3:13: store.postgres: dsn is required`, full},
		{"no url", "store:\n  redis: {prefix: x}\n", `s.yaml:3:10: store.redis: url is required`, full},
		{"unknown key", "store:\n  redis: {url: redis://h, ttl: 1h, prefx: a}\n", `s.yaml:3:36: store.redis.prefx: unknown field; did you mean "prefix"?`, full},
		{"bad ttl", "store:\n  redis: {url: redis://h, ttl: forever}\n", `s.yaml:3:32: store.redis.ttl: want a duration such as 30s or 2m, got "forever"`, full},
		{"unset variable", "store:\n  postgres: {dsn: \"${NO_SUCH_DSN}\"}\n", `s.yaml:3:19: store.postgres.dsn: environment variable NO_SUCH_DSN is not set`, full},
		{"variable outside credentials", "store:\n  redis: {url: redis://h, prefix: \"${PGPASS}\"}\n", `s.yaml:3:35: store.redis.prefix: reads ${PGPASS}, which a config file may read only in credential fields`, full},
		{"no opener", "store:\n  postgres: {dsn: postgres://h/db}\n", `s.yaml:3:13: store.postgres: this program cannot open a postgres store (it can open: memory); in Go, set Loader.Stores`, &config.Loader{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.loader.Load(writeTemp(t, "s.yaml", storeModel+tc.yaml))
			var ce *config.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
	if len(got) != 0 {
		t.Errorf("Load opened a store: %v", got)
	}
}

// An opener's failure names the section, and closes nothing.
func TestStoreOpenFails(t *testing.T) {
	l := &config.Loader{Stores: config.StoreOpeners{Redis: func(context.Context, config.RedisStore) (runlet.Store, error) {
		return nil, errors.New("connection refused")
	}}}
	setup, err := l.Load(writeTemp(t, "s.yaml", storeModel+"store: {redis: {url: \"redis://:pw@127.0.0.1:1\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.OpenStore(t.Context()); err == nil || err.Error() != "config: store.redis: connection refused" {
		t.Errorf("err = %v", err)
	}
	if setup.Store != nil || len(setup.RuntimeOptions) != 0 {
		t.Error("a failed store was kept")
	}
}

// Printing a config masks the store's DSN and URL.
func TestStoreMasked(t *testing.T) {
	var got []any
	closed := 0
	for _, yaml := range []string{
		"store:\n  postgres: {dsn: \"postgres://app:${P}@db.example/app?sslpassword=${P}\"}\n",
		"store:\n  postgres: {dsn: \"host=db user=app password=${P}\"}\n",
		"store:\n  redis: {url: \"rediss://user:${P}@cache.example:6380/0\"}\n",
	} {
		f, err := storeLoader(&got, &closed, "P", "SECRET-PW").Decode("s.yaml", []byte(storeModel+yaml))
		if err != nil {
			t.Fatal(err)
		}
		values := map[string]any{"File": *f, "*File": f, "Store": f.Store}
		if f.Store.Postgres != nil {
			values["PostgresStore"], values["*PostgresStore"] = *f.Store.Postgres, f.Store.Postgres
		} else {
			values["RedisStore"], values["*RedisStore"] = *f.Store.Redis, f.Store.Redis
		}
		for tname, v := range values {
			for pname, print := range printings {
				if out := print(v); strings.Contains(out, "SECRET") {
					t.Errorf("%s of %s shows a secret:\n%s", pname, tname, out)
				}
			}
		}
	}
}
