package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

// sampleCheckpoint returns a checkpoint using every field, with values that
// test JSON fidelity: a non-UTC time with nanoseconds, nested options,
// unicode and raw JSON arguments.
func sampleCheckpoint(runID string) *runlet.Checkpoint {
	return &runlet.Checkpoint{
		RunID:     runID,
		SessionID: "session-" + runID,
		Agent:     "assistant ✓",
		Turn:      3,
		History: []runlet.Message{
			runlet.UserText("earlier question"),
			runlet.AssistantText("earlier answer"),
		},
		HistoryLen: 2,
		Committed:  1,
		Messages: []runlet.Message{
			runlet.UserText("Delete /tmp/old.log and tell me the weather in 東京."),
			{Role: runlet.RoleAssistant, Parts: []runlet.Part{
				runlet.ReasoningPart{Text: "needs approval", Signature: "sig==", Provider: "anthropic"},
				runlet.ToolCallPart{ID: "call_1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/old.log","force":true}`)},
				runlet.ToolCallPart{ID: "call_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"東京","nested":{"a":[1,2.5,null]}}`),
					OriginalArguments: json.RawMessage(`{"city":"Tokyo"}`)}, // edited on approval
			}},
		},
		Results: []runlet.ToolResultPart{
			{CallID: "call_2", Name: "get_weather", Content: `{"temp":18}`},
			{CallID: "call_3", Name: "screenshot", Content: "the screen", Parts: []runlet.Part{
				runlet.TextPart{Text: "the screen"}, runlet.ImagePart{MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0}},
			}, Structured: json.RawMessage(`{"w":1}`)},
		},
		Pending: []runlet.ToolCallPart{
			{ID: "call_1", Name: "delete_file", Arguments: json.RawMessage(`{"path":"/tmp/old.log","force":true}`)},
		},
		Usage: runlet.Usage{InputTokens: 1234, OutputTokens: 56, ReasoningTokens: 7, CachedInputTokens: 1000},
		Options: map[string]any{
			"temperature": 0.2,
			"metadata":    map[string]any{"user": "ü", "tags": []any{"a", "b"}},
			"flag":        true,
		},
		CreatedAt: time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("IST", 5*3600+1800)),
		// A store carries the MAC (see runlet.WithCheckpointKey) as any
		// other field; a store that dropped it would make every
		// checkpoint of a Runtime with a key unresumable.
		MAC: "5f1d0c3a9b7e2d4c6a8f0e1b3d5c7a9e2f4b6d8c0a1e3f5b7d9c2e4a6b8d0f1c",
	}
}

// checkCheckpoint fails the test unless got and want encode to the same
// JSON: the checkpoint's contract is a lossless JSON round-trip.
func checkCheckpoint(t testing.TB, what string, got, want *runlet.Checkpoint) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil checkpoint", what)
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: marshal got: %v", what, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("%s: marshal want: %v", what, err)
	}
	if !bytes.Equal(g, w) {
		t.Fatalf("%s: checkpoint differs\n got: %.2000s\nwant: %.2000s", what, g, w)
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("%s: CreatedAt = %v; want %v", what, got.CreatedAt, want.CreatedAt)
	}
	checkMessages(t, what+": messages", got.Messages, want.Messages)
}

func mustSave(t testing.TB, s runlet.CheckpointStore, cp *runlet.Checkpoint) {
	t.Helper()
	if err := s.SaveCheckpoint(context.Background(), cp); err != nil {
		t.Fatalf("SaveCheckpoint(%q): %v", cp.RunID, err)
	}
}

func mustLoadCheckpoint(t testing.TB, s runlet.CheckpointStore, runID string) *runlet.Checkpoint {
	t.Helper()
	cp, err := s.LoadCheckpoint(context.Background(), runID)
	if err != nil {
		t.Fatalf("LoadCheckpoint(%q): %v", runID, err)
	}
	return cp
}

func checkNoCheckpoint(t testing.TB, s runlet.CheckpointStore, runID string) {
	t.Helper()
	cp, err := s.LoadCheckpoint(context.Background(), runID)
	if !errors.Is(err, runlet.ErrNotFound) {
		t.Fatalf("LoadCheckpoint(%q) = %v, %v; want an error wrapping runlet.ErrNotFound", runID, cp, err)
	}
}

func runCheckpoint(t *testing.T, newStore func(t *testing.T) runlet.Store) {
	t.Run("Missing", func(t *testing.T) {
		s := newStore(t)
		id := uid(t, "run")
		checkNoCheckpoint(t, s, id)
		if cp, err := s.ClaimCheckpoint(t.Context(), id); !errors.Is(err, runlet.ErrNotFound) {
			t.Fatalf("ClaimCheckpoint of a missing run = %v, %v; want ErrNotFound", cp, err)
		}
		if err := s.DeleteCheckpoint(t.Context(), id); err != nil {
			t.Fatalf("DeleteCheckpoint of a missing run: %v; want no error", err)
		}
	})
	t.Run("SaveLoad", func(t *testing.T) {
		s := newStore(t)
		want := sampleCheckpoint(uid(t, "run"))
		mustSave(t, s, want)
		got := mustLoadCheckpoint(t, s, want.RunID)
		checkCheckpoint(t, "loaded", got, want)
		if got.Options["temperature"] != 0.2 || got.Pending[0].ID != "call_1" || got.Usage.InputTokens != 1234 {
			t.Fatalf("loaded checkpoint fields wrong: %+v", got)
		}
		// Loading does not consume it.
		checkCheckpoint(t, "loaded again", mustLoadCheckpoint(t, s, want.RunID), want)
	})
	t.Run("Minimal", func(t *testing.T) {
		s := newStore(t)
		want := &runlet.Checkpoint{RunID: uid(t, "run")}
		mustSave(t, s, want)
		checkCheckpoint(t, "minimal", mustLoadCheckpoint(t, s, want.RunID), want)
	})
	t.Run("Overwrite", func(t *testing.T) {
		s := newStore(t)
		cp := sampleCheckpoint(uid(t, "run"))
		mustSave(t, s, cp)
		cp2 := sampleCheckpoint(cp.RunID)
		cp2.Turn = 4
		cp2.Pending = nil
		cp2.Messages = append(cp2.Messages, runlet.AssistantText("later"))
		mustSave(t, s, cp2)
		checkCheckpoint(t, "after overwrite", mustLoadCheckpoint(t, s, cp.RunID), cp2)
	})
	t.Run("ClaimAndDelete", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		a, b := sampleCheckpoint(uid(t, "run")), sampleCheckpoint(uid(t, "run"))
		mustSave(t, s, a)
		mustSave(t, s, b)
		got, err := s.ClaimCheckpoint(ctx, a.RunID)
		if err != nil {
			t.Fatalf("ClaimCheckpoint: %v", err)
		}
		checkCheckpoint(t, "claimed", got, a)
		checkNoCheckpoint(t, s, a.RunID)
		if _, err := s.ClaimCheckpoint(ctx, a.RunID); !errors.Is(err, runlet.ErrNotFound) {
			t.Fatalf("second ClaimCheckpoint: %v; want ErrNotFound", err)
		}
		// The other run's checkpoint is untouched.
		checkCheckpoint(t, "other run", mustLoadCheckpoint(t, s, b.RunID), b)
		if err := s.DeleteCheckpoint(ctx, b.RunID); err != nil {
			t.Fatalf("DeleteCheckpoint: %v", err)
		}
		checkNoCheckpoint(t, s, b.RunID)
		// A claimed run can be checkpointed again (a resumed run that
		// interrupts a second time).
		mustSave(t, s, a)
		checkCheckpoint(t, "saved again", mustLoadCheckpoint(t, s, a.RunID), a)
	})
	t.Run("ClaimRace", func(t *testing.T) {
		s := newStore(t)
		cp := sampleCheckpoint(uid(t, "run"))
		mustSave(t, s, cp)
		const claimers = 16
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			got   = make([]*runlet.Checkpoint, claimers)
			errs  = make([]error, claimers)
		)
		for i := range claimers {
			wg.Go(func() {
				<-start
				got[i], errs[i] = s.ClaimCheckpoint(context.Background(), cp.RunID)
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		for i := range claimers {
			switch {
			case errs[i] == nil:
				winners++
				checkCheckpoint(t, "won claim", got[i], cp)
			case !errors.Is(errs[i], runlet.ErrNotFound):
				t.Errorf("claimer %d: %v; want nil or ErrNotFound", i, errs[i])
			}
		}
		if winners != 1 {
			t.Fatalf("%d of %d concurrent claims won; want exactly 1", winners, claimers)
		}
		checkNoCheckpoint(t, s, cp.RunID)
	})
	t.Run("NoAliasing", func(t *testing.T) {
		s := newStore(t)
		cp := sampleCheckpoint(uid(t, "run"))
		mustSave(t, s, cp)
		cp.Turn = 99
		cp.Messages[0] = runlet.UserText("changed")
		cp.Pending[0].Arguments[2] = 'X'
		got := mustLoadCheckpoint(t, s, cp.RunID)
		checkCheckpoint(t, "after the caller changed its checkpoint", got, sampleCheckpoint(cp.RunID))
		got.Messages[0] = runlet.UserText("changed by reader")
		checkCheckpoint(t, "after a reader changed its copy", mustLoadCheckpoint(t, s, cp.RunID), sampleCheckpoint(cp.RunID))
	})
	t.Run("Large", func(t *testing.T) {
		s := newStore(t)
		cp := sampleCheckpoint(uid(t, "run"))
		cp.History = conversation(1000, "h")
		cp.Messages = append(cp.Messages, runlet.Message{Role: runlet.RoleUser, Parts: []runlet.Part{
			runlet.FilePart{Name: "big.bin", Data: binary(2 << 20)},
			runlet.TextPart{Text: strings.Repeat("x", 1<<20)},
		}})
		mustSave(t, s, cp)
		checkCheckpoint(t, "large", mustLoadCheckpoint(t, s, cp.RunID), cp)
	})
}
