package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/runlet/runlet"
)

// testCancel calls every method with a cancelled context: each must fail
// with an error wrapping context.Canceled and change nothing.
func testCancel(t *testing.T, s runlet.Store) {
	sid, runID := uid(t, "s"), uid(t, "run")
	history := []runlet.Message{runlet.UserText("q"), runlet.AssistantText("a")}
	mustAppend(t, s, sid, 0, history)
	mustSet(t, s, sid, "k", []byte("v"))
	cp := sampleCheckpoint(runID)
	mustSave(t, s, cp)
	newRun := uid(t, "run")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"LoadSession", func() error { _, err := s.LoadSession(ctx, sid); return err }},
		{"AppendSession", func() error {
			return s.AppendSession(ctx, sid, len(history), []runlet.Message{runlet.UserText("lost")})
		}},
		{"AppendSession(new session)", func() error {
			return s.AppendSession(ctx, sid+"-new", 0, []runlet.Message{runlet.UserText("lost")})
		}},
		{"GetState", func() error { _, err := s.GetState(ctx, sid, "k"); return err }},
		{"SetState", func() error { return s.SetState(ctx, sid, "k", []byte("lost")) }},
		{"SetState(new key)", func() error { return s.SetState(ctx, sid, "k2", []byte("lost")) }},
		{"DeleteState", func() error { return s.DeleteState(ctx, sid, "k") }},
		{"SaveCheckpoint", func() error { return s.SaveCheckpoint(ctx, sampleCheckpoint(newRun)) }},
		{"SaveCheckpoint(overwrite)", func() error {
			c := sampleCheckpoint(runID)
			c.Turn = 42
			return s.SaveCheckpoint(ctx, c)
		}},
		{"LoadCheckpoint", func() error { _, err := s.LoadCheckpoint(ctx, runID); return err }},
		{"ClaimCheckpoint", func() error { _, err := s.ClaimCheckpoint(ctx, runID); return err }},
		{"DeleteCheckpoint", func() error { return s.DeleteCheckpoint(ctx, runID) }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v; want an error wrapping context.Canceled", c.name, err)
		}
	}

	checkMessages(t, "session after cancelled calls", mustLoad(t, s, sid), history)
	if got := mustLoad(t, s, sid+"-new"); len(got) != 0 {
		t.Errorf("cancelled AppendSession created a session with %d messages", len(got))
	}
	checkValue(t, s, sid, "k", []byte("v"))
	checkMissing(t, s, sid, "k2")
	checkCheckpoint(t, "checkpoint after cancelled calls", mustLoadCheckpoint(t, s, runID), cp)
	checkNoCheckpoint(t, s, newRun)
}
