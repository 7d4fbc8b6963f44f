package postgres

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/runlet/runlet"
)

func openWith(t *testing.T, schema string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), testDSN(t), append([]Option{WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// execSQL runs SQL in schema as another program would: whoever can write
// the tables can write any row.
func execSQL(t *testing.T, schema, query string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, query, args...); err != nil {
		t.Fatal(err)
	}
}

// hugeMessage is SQL for a 32 MiB message row, built by the server so the
// test itself holds none of it.
const hugeMessage = `convert_to('{"role":"user","parts":[{"type":"text","text":"' || repeat('x', 32 << 20) || '"}]}', 'UTF8')`

// A row someone else made huge is refused with a *runlet.StoreLimitError
// before the server sends its value: reading it costs a few KiB, not its
// 32 MiB.
func TestHugeRowsRefusedUnread(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	{
		s := openWith(t, schema)
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
	execSQL(t, schema, `UPDATE runlet_messages SET message = `+hugeMessage)
	execSQL(t, schema, `UPDATE runlet_state SET value = `+hugeMessage)
	execSQL(t, schema, `UPDATE runlet_checkpoints SET checkpoint = `+hugeMessage)

	s := openWith(t, schema, WithMaxRowBytes(1<<20))
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
			if lim.Size < 32<<20 || lim.Limit != 1<<20 || !strings.Contains(err.Error(), "postgres.WithMaxRowBytes") {
				t.Errorf("err = %v (%+v): want the row's size, the limit and the option", err, lim)
			}
			if alloc > 4<<20 {
				t.Errorf("allocated %d MiB, want the row unread (< 4 MiB)", alloc>>20)
			}
		})
	}
	if _, err := s.LoadCheckpoint(ctx, "r2"); !errors.Is(err, runlet.ErrStoreLimit) {
		t.Errorf("after a refused claim: %v, want the checkpoint still there (and refused)", err)
	}
}

// A session over the message count or total size is refused, however small
// each of its rows.
func TestSessionLimits(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	msgs := make([]runlet.Message, 50)
	for i := range msgs {
		msgs[i] = runlet.UserText(strings.Repeat("x", 100))
	}
	if err := openWith(t, schema).AppendSession(ctx, "s1", 0, msgs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opt  Option
		unit string
	}{
		{"messages", WithMaxSessionMessages(49), "messages"},
		{"bytes", WithMaxSessionBytes(4000), "bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openWith(t, schema, tc.opt).LoadSession(ctx, "s1")
			var lim *runlet.StoreLimitError
			if !errors.As(err, &lim) || lim.Unit != tc.unit {
				t.Fatalf("err = %v, want a *runlet.StoreLimitError in %s", err, tc.unit)
			}
		})
	}
	t.Run("at the limits", func(t *testing.T) {
		got, err := openWith(t, schema, WithMaxSessionMessages(50), WithMaxRowBytes(200)).LoadSession(ctx, "s1")
		if err != nil || len(got) != 50 {
			t.Fatalf("got %d messages, %v; want 50", len(got), err)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		got, err := openWith(t, schema, WithMaxSessionMessages(-1), WithMaxSessionBytes(-1), WithMaxRowBytes(-1)).LoadSession(ctx, "s1")
		if err != nil || len(got) != 50 {
			t.Fatalf("got %d messages, %v; want 50", len(got), err)
		}
	})
}

// The Store does not write what it would then refuse to read.
func TestOverLimitWritesRefused(t *testing.T) {
	ctx := context.Background()
	s := openWith(t, testSchema(t), WithMaxRowBytes(1000), WithMaxSessionMessages(3))
	big := strings.Repeat("x", 1001)
	a := runlet.UserText("a")
	writes := []struct {
		name  string
		write func() error
	}{
		{"message", func() error { return s.AppendSession(ctx, "s1", 0, []runlet.Message{a, runlet.UserText(big)}) }},
		{"messages", func() error { return s.AppendSession(ctx, "s1", 0, []runlet.Message{a, a, a, a}) }},
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

// A message row that decodes into something no Runlet wrote is an error
// wrapping runlet.ErrInvalidRow naming the row, not a panic later.
func TestInvalidMessageRows(t *testing.T) {
	ctx := context.Background()
	schema := testSchema(t)
	s := openWith(t, schema)
	for i, row := range []string{
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
			id := "s" + strings.Repeat("i", i+1)
			if err := s.AppendSession(ctx, id, 0, []runlet.Message{runlet.UserText("hi"), runlet.UserText("ok")}); err != nil {
				t.Fatal(err)
			}
			execSQL(t, schema, `UPDATE runlet_messages SET message = $1 WHERE session_id = $2 AND seq = 1`, []byte(row), id)
			_, err := s.LoadSession(ctx, id)
			if !errors.Is(err, runlet.ErrInvalidRow) || !strings.Contains(err.Error(), `message 1 of session "`+id+`"`) {
				t.Fatalf("err = %v, want ErrInvalidRow naming message 1", err)
			}
		})
	}
}
