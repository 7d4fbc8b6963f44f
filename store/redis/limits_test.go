package redis

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// forgeHuge makes the value at key (a list element, hash field or string,
// as the key's type says) a 32 MiB message built by the server, as another
// program could: the test itself holds none of it.
const forgeHuge = `
local v = '{"role":"user","parts":[{"type":"text","text":"' .. string.rep('x', 32 * 1024 * 1024) .. '"}]}'
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'list' then
	redis.call('LSET', KEYS[1], 0, v)
elseif t == 'hash' then
	redis.call('HSET', KEYS[1], ARGV[1], v)
else
	redis.call('SET', KEYS[1], v)
end
return #v
`

// A value someone else made huge is refused with a *runlet.StoreLimitError
// before Redis sends it: reading it costs a few KiB, not its 32 MiB.
func TestHugeRowsRefusedUnread(t *testing.T) {
	ctx := context.Background()
	prefix := testPrefix(t)
	w := open(t, prefix)
	if err := w.AppendSession(ctx, "s1", 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	if err := w.SetState(ctx, "s1", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2"} {
		if err := w.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: id, Messages: []runlet.Message{runlet.UserText("hi")}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{w.messagesKey("s1"), w.stateKey("s1"), w.checkpointKey("r1"), w.checkpointKey("r2")} {
		if err := w.Client().Eval(ctx, forgeHuge, []string{key}, "k").Err(); err != nil {
			t.Fatal(err)
		}
	}

	s := open(t, prefix, WithMaxRowBytes(1<<20))
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
			t.Logf("allocated %d KiB reading a 32 MiB value", alloc>>10)
			var lim *runlet.StoreLimitError
			if !errors.As(err, &lim) || !errors.Is(err, runlet.ErrStoreLimit) {
				t.Fatalf("err = %v, want a *runlet.StoreLimitError", err)
			}
			if lim.Size < 32<<20 || lim.Limit != 1<<20 || !strings.Contains(err.Error(), "redis.WithMaxRowBytes") {
				t.Errorf("err = %v (%+v): want the value's size, the limit and the option", err, lim)
			}
			if alloc > 4<<20 {
				t.Errorf("allocated %d MiB, want the value unread (< 4 MiB)", alloc>>20)
			}
		})
	}
	if _, err := s.LoadCheckpoint(ctx, "r2"); !errors.Is(err, runlet.ErrStoreLimit) {
		t.Errorf("after a refused claim: %v, want the checkpoint still there (and refused)", err)
	}
}

// A session over the message count or total size is refused, however small
// each of its messages.
func TestSessionLimits(t *testing.T) {
	ctx := context.Background()
	prefix := testPrefix(t)
	msgs := make([]runlet.Message, 50)
	for i := range msgs {
		msgs[i] = runlet.UserText(strings.Repeat("x", 100))
	}
	if err := open(t, prefix).AppendSession(ctx, "s1", 0, msgs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opt  Option
		unit string
	}{
		{"messages", WithMaxSessionMessages(49), "messages"},
		{"bytes", WithMaxSessionBytes(4000), "bytes"},
		{"one message", WithMaxRowBytes(100), "bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := open(t, prefix, tc.opt).LoadSession(ctx, "s1")
			var lim *runlet.StoreLimitError
			if !errors.As(err, &lim) || lim.Unit != tc.unit {
				t.Fatalf("err = %v, want a *runlet.StoreLimitError in %s", err, tc.unit)
			}
		})
	}
	t.Run("at the limits", func(t *testing.T) {
		got, err := open(t, prefix, WithMaxSessionMessages(50), WithMaxRowBytes(200)).LoadSession(ctx, "s1")
		if err != nil || len(got) != 50 {
			t.Fatalf("got %d messages, %v; want 50", len(got), err)
		}
	})
	t.Run("no limit", func(t *testing.T) {
		got, err := open(t, prefix, WithMaxSessionMessages(-1), WithMaxSessionBytes(-1), WithMaxRowBytes(-1)).LoadSession(ctx, "s1")
		if err != nil || len(got) != 50 {
			t.Fatalf("got %d messages, %v; want 50", len(got), err)
		}
	})
}

// The Store does not write what it would then refuse to read.
func TestOverLimitWritesRefused(t *testing.T) {
	ctx := context.Background()
	s := open(t, testPrefix(t), WithMaxRowBytes(1000), WithMaxSessionMessages(3))
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

// A stored message that decodes into something no Runlet wrote, or a key of
// another type, is an error wrapping runlet.ErrInvalidRow naming it.
func TestInvalidMessageRows(t *testing.T) {
	ctx := context.Background()
	s := open(t, testPrefix(t))
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
			if err := s.Client().LSet(ctx, s.messagesKey(id), 1, row).Err(); err != nil {
				t.Fatal(err)
			}
			_, err := s.LoadSession(ctx, id)
			if !errors.Is(err, runlet.ErrInvalidRow) || !strings.Contains(err.Error(), `message 1 of session "`+id+`"`) {
				t.Fatalf("err = %v, want ErrInvalidRow naming message 1", err)
			}
		})
	}
	t.Run("wrong key types", func(t *testing.T) {
		c := s.Client()
		c.Set(ctx, s.messagesKey("wt"), "x", 0)
		c.Set(ctx, s.stateKey("wt"), "x", 0)
		c.RPush(ctx, s.checkpointKey("wt"), "x")
		_, lerr := s.LoadSession(ctx, "wt")
		_, gerr := s.GetState(ctx, "wt", "k")
		_, cerr := s.LoadCheckpoint(ctx, "wt")
		for _, err := range []error{lerr, gerr, cerr} {
			if !errors.Is(err, runlet.ErrInvalidRow) {
				t.Errorf("err = %v, want ErrInvalidRow", err)
			}
		}
	})
}
