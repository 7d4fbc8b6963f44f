package redis

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

// TestSessionTTL checks that every kind of session write sets the expiry of
// both session keys again, and that without the option nothing expires.
func TestSessionTTL(t *testing.T) {
	ctx := t.Context()
	prefix := testPrefix(t)
	s := open(t, prefix, WithSessionTTL(time.Hour))
	c := s.Client()
	const sid = "ttl"
	msgs, state := s.messagesKey(sid), s.stateKey(sid)
	if err := s.SetState(ctx, sid, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendSession(ctx, sid, 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		name  string
		write func() error
	}{
		{"AppendSession", func() error {
			return s.AppendSession(ctx, sid, 1, []runlet.Message{runlet.AssistantText("hello")})
		}},
		{"SetState", func() error { return s.SetState(ctx, sid, "k2", []byte("v2")) }},
		{"DeleteState", func() error { return s.DeleteState(ctx, sid, "k2") }},
	}
	for _, w := range writes {
		// Shorten both expiries, then check that the write set them back
		// to about an hour: no waiting involved.
		for _, k := range []string{msgs, state} {
			if err := c.PExpire(ctx, k, time.Second).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		for _, k := range []string{msgs, state} {
			ttl, err := c.PTTL(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if ttl < 59*time.Minute || ttl > time.Hour {
				t.Errorf("after %s, %s expires in %v; want about an hour", w.name, k, ttl)
			}
		}
	}
	// Reads leave the expiry alone.
	c.PExpire(ctx, msgs, time.Minute)
	if _, err := s.LoadSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(ctx, msgs).Val(); ttl > time.Minute {
		t.Errorf("LoadSession extended the expiry to %v", ttl)
	}

	// Without the option, keys do not expire.
	plain := open(t, prefix+"plain:")
	if err := plain.AppendSession(ctx, sid, 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	if err := plain.SetState(ctx, sid, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{plain.messagesKey(sid), plain.stateKey(sid)} {
		if ttl := c.PTTL(ctx, k).Val(); ttl != -1 {
			t.Errorf("without WithSessionTTL, %s has TTL %v; want none (-1)", k, ttl)
		}
	}
}

// TestSessionExpires checks that an expired session is gone, messages and
// state, as an unknown one: polled, with a generous guard.
func TestSessionExpires(t *testing.T) {
	ctx := t.Context()
	s := open(t, testPrefix(t), WithSessionTTL(20*time.Millisecond), WithCheckpointTTL(20*time.Millisecond))
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetState(ctx, "s", "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	guard := time.Now().Add(30 * time.Second)
	for {
		msgs, err := s.LoadSession(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		_, serr := s.GetState(ctx, "s", "k")
		_, cerr := s.LoadCheckpoint(ctx, "r")
		if len(msgs) == 0 && errors.Is(serr, runlet.ErrNotFound) && errors.Is(cerr, runlet.ErrNotFound) {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("after 30s: %d messages, state %v, checkpoint %v; want all expired", len(msgs), serr, cerr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// An expired session starts again from 0.
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("again")}); err != nil {
		t.Fatalf("appending to an expired session at 0: %v", err)
	}
}

func TestCheckpointTTL(t *testing.T) {
	ctx := t.Context()
	prefix := testPrefix(t)
	s := open(t, prefix, WithCheckpointTTL(time.Hour))
	c := s.Client()
	if err := s.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(ctx, s.checkpointKey("r")).Val(); ttl < 59*time.Minute || ttl > time.Hour {
		t.Errorf("checkpoint expires in %v; want about an hour", ttl)
	}
	// A save by a store without the option clears the expiry.
	plain := open(t, prefix)
	if err := plain.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "r", Turn: 2}); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(ctx, s.checkpointKey("r")).Val(); ttl != -1 {
		t.Errorf("after a save without WithCheckpointTTL the checkpoint expires in %v; want never (-1)", ttl)
	}
}

// TestPrefix checks that stores with different prefixes on one Redis are
// apart, and that every key starts with the prefix.
func TestPrefix(t *testing.T) {
	ctx := t.Context()
	prefix := testPrefix(t)
	a, b := open(t, prefix+"a:"), open(t, prefix+"b:")
	if err := a.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("for a")}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetState(ctx, "s", "k", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if msgs, err := b.LoadSession(ctx, "s"); err != nil || len(msgs) != 0 {
		t.Fatalf("another prefix sees %d messages (%v)", len(msgs), err)
	}
	if _, err := b.GetState(ctx, "s", "k"); !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("another prefix sees the state: %v", err)
	}
	if _, err := b.LoadCheckpoint(ctx, "r"); !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("another prefix sees the checkpoint: %v", err)
	}
	keys, err := a.Client().Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 {
		t.Errorf("keys = %q; want 3", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix+"a:") {
			t.Errorf("key %q lacks the prefix %q", k, prefix+"a:")
		}
	}
	d, err := New(a.Client())
	if err != nil {
		t.Fatal(err)
	}
	if got := d.messagesKey("x"); got != "runlet:{s:x}:messages" {
		t.Errorf("default messages key = %q", got)
	}
}

// TestAwkwardSessionIDs checks that session IDs holding the key layout's
// own punctuation stay apart.
func TestAwkwardSessionIDs(t *testing.T) {
	ctx := t.Context()
	s := open(t, testPrefix(t))
	ids := []string{"", "x", "x}", "x}:messages", "x}:state", "{s:x}", "}", "{", ":", "checkpoint:x"}
	for i, id := range ids {
		if err := s.AppendSession(ctx, id, 0, []runlet.Message{runlet.UserText(id)}); err != nil {
			t.Fatalf("session %q: %v", id, err)
		}
		if err := s.SetState(ctx, id, "k", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range ids {
		msgs, err := s.LoadSession(ctx, id)
		if err != nil || len(msgs) != 1 || msgs[0].Text() != id {
			t.Errorf("session %q = %v, %v; want its own one message", id, msgs, err)
		}
		if v, err := s.GetState(ctx, id, "k"); err != nil || len(v) != 1 || v[0] != byte(i) {
			t.Errorf("state of session %q = %v, %v", id, v, err)
		}
	}
}

// TestForgedValues checks what the store does with values someone else
// wrote: a clear error, never a panic, and nothing deleted.
func TestForgedValues(t *testing.T) {
	ctx := t.Context()
	s := open(t, testPrefix(t))
	c := s.Client()

	// A key of the wrong type.
	c.Set(ctx, s.messagesKey("wrongtype"), "not a list", 0)
	if _, err := s.LoadSession(ctx, "wrongtype"); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("LoadSession of a string key: %v; want a WRONGTYPE error", err)
	}
	if err := s.AppendSession(ctx, "wrongtype", 0, []runlet.Message{runlet.UserText("x")}); err == nil || errors.Is(err, runlet.ErrConflict) {
		t.Errorf("AppendSession to a string key: %v; want an error other than a conflict", err)
	}
	c.RPush(ctx, s.checkpointKey("listcp"), "x")
	if _, err := s.LoadCheckpoint(ctx, "listcp"); err == nil || errors.Is(err, runlet.ErrNotFound) {
		t.Errorf("LoadCheckpoint of a list key: %v; want an error", err)
	}

	// A message that does not decode.
	c.RPush(ctx, s.messagesKey("garbage"), `{"role":"user","parts":[]}`, `{not json`)
	if _, err := s.LoadSession(ctx, "garbage"); err == nil || !strings.Contains(err.Error(), "message 1") {
		t.Errorf("LoadSession with a broken message: %v; want an error naming message 1", err)
	}

	// A checkpoint that does not decode is reported and left in place by
	// a claim.
	c.Set(ctx, s.checkpointKey("bad"), "{broken", 0)
	_, err := s.ClaimCheckpoint(ctx, "bad")
	var cpErr *runlet.CheckpointError
	if !errors.As(err, &cpErr) || cpErr.RunID != "bad" {
		t.Errorf("ClaimCheckpoint of a broken checkpoint: %v; want a *runlet.CheckpointError", err)
	}
	if n := c.Exists(ctx, s.checkpointKey("bad")).Val(); n != 1 {
		t.Error("a claim deleted a checkpoint it could not decode")
	}
}

// TestReadersNeverSeeHalfTurns has a reader load the session over and over
// while a writer appends 4-message turns: every load must hold whole turns.
// (Appending the messages one command at a time fails this at once.)
func TestReadersNeverSeeHalfTurns(t *testing.T) {
	ctx := t.Context()
	prefix := testPrefix(t)
	w, r := open(t, prefix), open(t, prefix)
	const turns, size = 200, 4
	done := make(chan error, 1)
	go func() {
		for n := range turns {
			turn := make([]runlet.Message, size)
			for i := range turn {
				turn[i] = runlet.UserText(strings.Repeat("x", 100*i))
			}
			if err := w.AppendSession(ctx, "s", n*size, turn); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	loads := 0
	for {
		msgs, err := r.LoadSession(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		loads++
		if len(msgs)%size != 0 {
			t.Fatalf("a reader saw %d messages: half a turn", len(msgs))
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if msgs := mustLoadN(t, r, "s"); msgs != turns*size {
				t.Fatalf("%d messages at the end; want %d", msgs, turns*size)
			}
			t.Logf("%d loads during %d appends", loads, turns)
			return
		default:
		}
	}
}

func mustLoadN(t *testing.T, s *Store, sessionID string) int {
	t.Helper()
	msgs, err := s.LoadSession(t.Context(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	return len(msgs)
}
