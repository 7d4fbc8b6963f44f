package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
)

func mustGet(t testing.TB, s runlet.StateStore, sessionID, key string) []byte {
	t.Helper()
	v, err := s.GetState(context.Background(), sessionID, key)
	if err != nil {
		t.Fatalf("GetState(%q, %q): %v", sessionID, key, err)
	}
	return v
}

func mustSet(t testing.TB, s runlet.StateStore, sessionID, key string, value []byte) {
	t.Helper()
	if err := s.SetState(context.Background(), sessionID, key, value); err != nil {
		t.Fatalf("SetState(%q, %q, %d bytes): %v", sessionID, key, len(value), err)
	}
}

func checkMissing(t testing.TB, s runlet.StateStore, sessionID, key string) {
	t.Helper()
	v, err := s.GetState(context.Background(), sessionID, key)
	if !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("GetState(%q, %q) = %q, %v; want an error wrapping runlet.ErrNotFound", sessionID, key, v, err)
	}
}

func checkValue(t testing.TB, s runlet.StateStore, sessionID, key string, want []byte) {
	t.Helper()
	if got := mustGet(t, s, sessionID, key); !bytes.Equal(got, want) {
		t.Fatalf("GetState(%q, %q) = %s; want %s", sessionID, key, short(got), short(want))
	}
}

func short(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%q...(%d bytes)", b[:64], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func runState(t *testing.T, newStore func(t *testing.T) runlet.Store) {
	t.Run("Missing", func(t *testing.T) {
		s := newStore(t)
		sid := uid(t, "s")
		checkMissing(t, s, sid, "nothing")
		// A key in a session that has messages but no state is missing too.
		mustAppend(t, s, sid, 0, []runlet.Message{runlet.UserText("hi")})
		checkMissing(t, s, sid, "nothing")
	})
	t.Run("SetGetOverwriteDelete", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		sid := uid(t, "s")
		mustSet(t, s, sid, "cart", []byte(`{"items":["apple"]}`))
		checkValue(t, s, sid, "cart", []byte(`{"items":["apple"]}`))
		mustSet(t, s, sid, "cart", []byte(`{"items":["apple","pear"]}`))
		checkValue(t, s, sid, "cart", []byte(`{"items":["apple","pear"]}`))
		// A shorter value replaces a longer one entirely.
		mustSet(t, s, sid, "cart", []byte(`{}`))
		checkValue(t, s, sid, "cart", []byte(`{}`))
		if err := s.DeleteState(ctx, sid, "cart"); err != nil {
			t.Fatalf("DeleteState: %v", err)
		}
		checkMissing(t, s, sid, "cart")
		if err := s.DeleteState(ctx, sid, "cart"); err != nil {
			t.Fatalf("DeleteState of a missing key: %v; want no error", err)
		}
		if err := s.DeleteState(ctx, uid(t, "s"), "never"); err != nil {
			t.Fatalf("DeleteState in an unknown session: %v; want no error", err)
		}
		// Set after delete works.
		mustSet(t, s, sid, "cart", []byte("again"))
		checkValue(t, s, sid, "cart", []byte("again"))
	})
	t.Run("BinaryAndEmpty", func(t *testing.T) {
		s := newStore(t)
		sid := uid(t, "s")
		bin := binary(1024)
		mustSet(t, s, sid, "bin", bin)
		checkValue(t, s, sid, "bin", bin)
		for _, v := range [][]byte{{}, nil} {
			mustSet(t, s, sid, "empty", v)
			got, err := s.GetState(t.Context(), sid, "empty")
			if err != nil || len(got) != 0 {
				t.Fatalf("GetState of an empty value (%#v) = %q, %v; want empty, no error", v, got, err)
			}
		}
		utf := []byte("ключ → 値 ✓ \x00 end")
		mustSet(t, s, sid, "utf", utf)
		checkValue(t, s, sid, "utf", utf)
	})
	t.Run("Isolation", func(t *testing.T) {
		s := newStore(t)
		a, b := uid(t, "s"), uid(t, "s")
		keys := []string{"k", "K", "k%", "k_", "k ", "k/sub", "k:sub", "ключ", strings.Repeat("k", 500), ""}
		for i, k := range keys {
			mustSet(t, s, a, k, []byte(fmt.Sprintf("a-%d", i)))
			mustSet(t, s, b, k, []byte(fmt.Sprintf("b-%d", i)))
		}
		for i, k := range keys {
			checkValue(t, s, a, k, []byte(fmt.Sprintf("a-%d", i)))
			checkValue(t, s, b, k, []byte(fmt.Sprintf("b-%d", i)))
		}
		if err := s.DeleteState(t.Context(), a, "k"); err != nil {
			t.Fatal(err)
		}
		checkMissing(t, s, a, "k")
		checkValue(t, s, b, "k", []byte("b-0"))
		checkValue(t, s, a, "K", []byte("a-1"))
		checkValue(t, s, a, "k%", []byte("a-2"))
		// State lives apart from the session's messages.
		if got := mustLoad(t, s, a); len(got) != 0 {
			t.Fatalf("setting state added %d messages to the session", len(got))
		}
	})
	t.Run("NoAliasing", func(t *testing.T) {
		s := newStore(t)
		sid := uid(t, "s")
		v := []byte("original")
		mustSet(t, s, sid, "k", v)
		copy(v, "CHANGED!")
		checkValue(t, s, sid, "k", []byte("original"))
		got := mustGet(t, s, sid, "k")
		copy(got, "CHANGED!")
		checkValue(t, s, sid, "k", []byte("original"))
	})
	t.Run("Large", func(t *testing.T) {
		s := newStore(t)
		sid := uid(t, "s")
		v := binary(5 << 20)
		mustSet(t, s, sid, "big", v)
		checkValue(t, s, sid, "big", v)
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := newStore(t)
		sid := uid(t, "s")
		const workers = 8
		var wg sync.WaitGroup
		errs := make(chan error, workers*20)
		for w := range workers {
			wg.Go(func() {
				ctx := context.Background()
				for i := range 10 {
					if err := s.SetState(ctx, sid, fmt.Sprintf("own-%d", w), []byte(fmt.Sprintf("%d-%d", w, i))); err != nil {
						errs <- err
					}
					if err := s.SetState(ctx, sid, "shared", []byte(fmt.Sprintf("w%d", w))); err != nil {
						errs <- err
					}
					if _, err := s.GetState(ctx, sid, "shared"); err != nil {
						errs <- fmt.Errorf("GetState of a key set before: %w", err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for w := range workers {
			checkValue(t, s, sid, fmt.Sprintf("own-%d", w), []byte(fmt.Sprintf("%d-9", w)))
		}
		var w int
		if got := mustGet(t, s, sid, "shared"); len(got) < 2 || got[0] != 'w' {
			t.Fatalf("shared key = %q; want one writer's whole value", got)
		} else if _, err := fmt.Sscanf(string(got), "w%d", &w); err != nil || w < 0 || w >= workers {
			t.Fatalf("shared key = %q; want one writer's whole value", got)
		}
	})
}
