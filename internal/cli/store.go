package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/store/postgres"
	"github.com/runlet/runlet/store/redis"
	"github.com/runlet/runlet/store/sqlite"
)

// storeOpeners open the stores a --config's store: section may name: every
// durable store the CLI links. (A library program sets only those it
// links, so that it does not build the others' drivers.)
var storeOpeners = config.StoreOpeners{
	SQLite: func(ctx context.Context, c config.SQLiteStore) (runlet.Store, error) {
		return openSQLite(ctx, c.Path)
	},
	Postgres: func(ctx context.Context, c config.PostgresStore) (runlet.Store, error) {
		var opts []postgres.Option
		if c.Schema != "" {
			opts = append(opts, postgres.WithSchema(c.Schema))
		}
		st, err := postgres.Open(ctx, c.DSN, opts...)
		if err != nil {
			return nil, err
		}
		return st, nil
	},
	Redis: func(ctx context.Context, c config.RedisStore) (runlet.Store, error) {
		var opts []redis.Option
		if c.Prefix != "" {
			opts = append(opts, redis.WithPrefix(c.Prefix))
		}
		if c.TTL > 0 {
			opts = append(opts, redis.WithSessionTTL(c.TTL), redis.WithCheckpointTTL(c.TTL))
		}
		st, err := redis.Open(ctx, c.URL, opts...)
		if err != nil {
			return nil, err
		}
		return st, nil
	},
}

// openSQLite opens the SQLite file at path. Sessions are private: the
// directories it makes are 0700 and the store creates its file 0600.
func openSQLite(ctx context.Context, path string) (*sqlite.Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, path)
}

// openStore opens the store sessions live in, when the command keeps
// sessions (--session; mcp serve's session_id): --store (mcp serve:
// --session-store) wins over the config's store:, which wins over the
// default SQLite file in the user cache directory (for --session only).
// It returns a nil store when none applies.
func (a *app) openStore(ctx context.Context, f *flags, setup *config.Setup) (runlet.Store, io.Closer, error) {
	flag := "--store"
	if f.serveSessions {
		flag = "--session-store"
	}
	switch {
	case f.session == "" && !f.serveSessions:
		return nil, nil, nil
	case f.store != "":
		st, err := openSQLite(ctx, f.store)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", flag, f.store, err)
		}
		return st, st, nil
	case setup.File.Store.Kind() != "":
		c, err := setup.OpenStore(ctx)
		if err != nil {
			// The error names the section, never the DSN or URL.
			return nil, nil, fmt.Errorf("--config %s: %w", f.config, err)
		}
		return setup.Store, c, nil
	case f.serveSessions:
		return nil, nil, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil, nil, usagef("--session: no cache directory (%v); pass --store FILE", err)
	}
	dir = filepath.Join(dir, "runlet")
	if err := privateDir(dir); err != nil {
		return nil, nil, fmt.Errorf("--session: cache directory: %w", err)
	}
	path := filepath.Join(dir, "sessions.db")
	st, err := openSQLite(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("--store %s: %w", path, err)
	}
	return st, st, nil
}
