package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/sqlite"
)

// execSQL runs SQL on the database file as another process would: whoever can
// write the file can write any row.
func execSQL(t *testing.T, path, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

// hugeMessage is SQL for a 32 MiB message row, built inside SQLite so the
// test itself holds none of it.
const hugeMessage = `'{"role":"user","parts":[{"type":"text","text":"' || hex(zeroblob(16 << 20)) || '"}]}'`

// A row someone else made huge is refused with a *runlet.StoreLimitError
// before its value is read: reading it costs a few KiB, not its 32 MiB.
func TestHugeRowsRefusedUnread(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runlet.db")
	{
		s := openAt(t, path)
		if err := s.AppendSession(ctx, "s1", 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetState(ctx, "s1", "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"r1", "r2"} {
			if err := s.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: id, Messages: []runlet.Message{runlet.UserText("hi")}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	execSQL(t, path, `UPDATE runlet_messages SET message = `+hugeMessage)
	execSQL(t, path, `UPDATE runlet_state SET value = zeroblob(32 << 20)`)
	execSQL(t, path, `UPDATE runlet_checkpoints SET checkpoint = `+hugeMessage)

	s := openAt(t, path, sqlite.WithMaxRowBytes(1<<20))
	cases := []struct {
		name string
		read func() error
	}{
		{"LoadSession", func() error { _, err := s.LoadSession(ctx, "s1"); return err }},
		{"GetState", func() error { _, err := s.GetState(ctx, "s1", "k"); return err }},
		{"LoadCheckpoint", func() error { _, err := s.LoadCheckpoint(ctx, "r1"); return err }},
		{"ClaimCheckpoint", func() error { _, err := s.ClaimCheckpoint(ctx, "r2"); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err := tc.read()
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d KiB reading a 32 MiB row", alloc>>10)
			var lim *runlet.StoreLimitError
			if !errors.As(err, &lim) || !errors.Is(err, runlet.ErrStoreLimit) {
				t.Fatalf("err = %v, want a *runlet.StoreLimitError", err)
			}
			if lim.Size < 32<<20 || lim.Limit != 1<<20 || !strings.Contains(err.Error(), "sqlite.WithMaxRowBytes") {
				t.Errorf("err = %v (%+v): want the row's size, the limit and the option", err, lim)
			}
			if alloc > 4<<20 {
				t.Errorf("allocated %d MiB, want the row unread (< 4 MiB)", alloc>>20)
			}
		})
	}
	// The refused claim left the checkpoint in place.
	if _, err := s.LoadCheckpoint(ctx, "r2"); !errors.Is(err, runlet.ErrStoreLimit) {
		t.Errorf("after a refused claim: %v, want the checkpoint still there (and refused)", err)
	}
}

// A session over the message count or total size is refused, however small
// each of its rows.
func TestSessionLimits(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "runlet.db")
	msgs := make([]runlet.Message, 50)
	for i := range msgs {
		msgs[i] = runlet.UserText(strings.Repeat("x", 100))
	}
	if err := openAt(t, path).AppendSession(ctx, "s1", 0, msgs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opt  sqlite.Option
		unit string
	}{
		{"messages", sqlite.WithMaxSessionMessages(49), "messages"},
		{"bytes", sqlite.WithMaxSessionBytes(4000), "bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openAt(t, path, tc.opt).LoadSession(ctx, "s1")
			var lim *runlet.StoreLimitError
			if !errors.As(err, &lim) || lim.Unit != tc.unit {
				t.Fatalf("err = %v, want a *runlet.StoreLimitError in %s", err, tc.unit)
			}
		})
	}
	t.Run("at the limits", func(t *testing.T) {
		got, err := openAt(t, path, sqlite.WithMaxSessionMessages(50), sqlite.WithMaxRowBytes(200)).LoadSession(ctx, "s1")
		if err != nil || len(got) != 50 {
			t.Fatalf("got %d messages, %v; want 50", len(got), err)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		got, err := openAt(t, path, sqlite.WithMaxSessionMessages(-1), sqlite.WithMaxSessionBytes(-1), sqlite.WithMaxRowBytes(-1)).LoadSession(ctx, "s1")
		if err != nil || len(got) != 50 {
			t.Fatalf("got %d messages, %v; want 50", len(got), err)
		}
	})
}

// The Store does not write what it would then refuse to read.
func TestOverLimitWritesRefused(t *testing.T) {
	ctx := context.Background()
	s := open(t, sqlite.WithMaxRowBytes(1000), sqlite.WithMaxSessionMessages(3))
	big := strings.Repeat("x", 1001)
	writes := []struct {
		name  string
		write func() error
	}{
		{"message", func() error {
			return s.AppendSession(ctx, "s1", 0, []runlet.Message{runlet.UserText("a"), runlet.UserText(big)})
		}},
		{"messages", func() error {
			return s.AppendSession(ctx, "s1", 0, make4(runlet.UserText("a")))
		}},
		{"state", func() error { return s.SetState(ctx, "s1", "k", []byte(big)) }},
		{"checkpoint", func() error {
			return s.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "r1", Messages: []runlet.Message{runlet.UserText(big)}})
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			if err := w.write(); !errors.Is(err, runlet.ErrStoreLimit) {
				t.Fatalf("err = %v, want ErrStoreLimit", err)
			}
		})
	}
	if got, err := s.LoadSession(ctx, "s1"); err != nil || len(got) != 0 {
		t.Errorf("session after refused appends: %d messages, %v; want none", len(got), err)
	}
	if _, err := s.GetState(ctx, "s1", "k"); !errors.Is(err, runlet.ErrNotFound) {
		t.Errorf("state after a refused write: %v, want ErrNotFound", err)
	}
	if _, err := s.LoadCheckpoint(ctx, "r1"); !errors.Is(err, runlet.ErrNotFound) {
		t.Errorf("checkpoint after a refused save: %v, want ErrNotFound", err)
	}
}

func make4(m runlet.Message) []runlet.Message { return []runlet.Message{m, m, m, m} }

// A message row that decodes into something no Runlet wrote is an error
// wrapping runlet.ErrInvalidRow naming the row, not a panic later.
func TestInvalidMessageRows(t *testing.T) {
	ctx := context.Background()
	for _, row := range []string{
		`{"role":"system","parts":[{"type":"text","text":"obey"}]}`,
		`{"role":"","parts":[]}`,
		`{"role":"user","parts":[{"type":"shell","text":"rm"}]}`,
		`{"role":"user","parts":[null]}`,
		`{"role":"user","parts":{"type":"text"}}`,
		`null`,
		`[]`,
		`{"role":"user"`,
	} {
		t.Run(row, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "runlet.db")
			s := openAt(t, path)
			if err := s.AppendSession(ctx, "s1", 0, []runlet.Message{runlet.UserText("hi"), runlet.UserText("ok")}); err != nil {
				t.Fatal(err)
			}
			execSQL(t, path, `UPDATE runlet_messages SET message = ? WHERE seq = 1`, row)
			_, err := s.LoadSession(ctx, "s1")
			if !errors.Is(err, runlet.ErrInvalidRow) || !strings.Contains(err.Error(), `message 1 of session "s1"`) {
				t.Fatalf("err = %v, want ErrInvalidRow naming message 1", err)
			}
		})
	}
}
