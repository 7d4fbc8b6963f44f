package runlet_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

var (
	macKey    = []byte("0123456789abcdef0123456789abcdef")
	macOldKey = []byte("fedcba9876543210fedcba9876543210")
)

// macRun interrupts a run of forgeableAgent with a Runtime of the given
// options, and returns the store, agent, log and run ID.
func macRun(t *testing.T, opts ...runlet.RuntimeOption) (runlet.Store, *runlet.Agent, *ranLog, string) {
	t.Helper()
	store := runlet.NewMemoryStore()
	log := &ranLog{}
	agent := forgeableAgent(runlettest.NewModel(script()[0], runlettest.TextReply("Done.")), log)
	opts = append([]runlet.RuntimeOption{runlet.WithStore(store), runlet.WithLogger(discardLogger())}, opts...)
	// Options that do not survive JSON as they are (an int64 past 2^53
	// comes back a float64) are signed as a store gives them back.
	res, err := runlet.NewRuntime(opts...).Run(context.Background(), agent, "clean up",
		runlet.WithSession("s"), runlet.WithOptions(map[string]any{"big": int64(1<<60 + 1), "tags": []string{"a"}}))
	if err != nil || res.Status != runlet.StateInterrupted {
		t.Fatalf("run: %+v, %v", res, err)
	}
	return store, agent, log, res.RunID
}

func TestCheckpointKeyResumes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		save, load [][]byte
	}{
		{"one key", [][]byte{macKey}, [][]byte{macKey}},
		{"rotated: saved under the old key", [][]byte{macOldKey}, [][]byte{macKey, macOldKey}},
		{"rotated: saved under the new key", [][]byte{macKey, macOldKey}, [][]byte{macKey, macOldKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, agent, log, runID := macRun(t, runlet.WithCheckpointKey(tc.save[0], tc.save[1:]...))
			cp, err := store.LoadCheckpoint(ctx, runID)
			if err != nil || len(cp.MAC) != 64 {
				t.Fatalf("checkpoint MAC %q, %v", cp.MAC, err)
			}
			rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithCheckpointKey(tc.load[0], tc.load[1:]...))
			res, err := rt.Resume(ctx, agent, runID, runlet.Approve("d1"), runlet.Reject("d2", "no"))
			if err != nil || res.Status != runlet.StateFinished {
				t.Fatalf("resume: %+v, %v", res, err)
			}
			if got := log.list(); strings.Join(got, ",") != "weather Rome,delete /tmp/a" {
				t.Fatalf("ran %v", got)
			}
		})
	}
}

func TestCheckpointKeyDetectsChanges(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		key    [][]byte // the resuming Runtime's keys
		forge  func(cp *runlet.Checkpoint)
		decide []runlet.Decision
	}{
		// Consistent, so only the key tells: a result said to be done.
		{name: "result forged for the call needing approval", decide: []runlet.Decision{runlet.Reject("d2", "no")},
			forge: func(cp *runlet.Checkpoint) {
				cp.Pending = cp.Pending[1:]
				cp.Results = append(cp.Results, runlet.ToolResultPart{CallID: "d1", Name: "delete_file", Content: "deleted"})
			}},
		{name: "arguments changed", forge: func(cp *runlet.Checkpoint) {
			c := cp.Pending[0]
			c.Arguments = []byte(`{"path":"/etc"}`)
			cp.Pending[0] = c
			lastCalls(cp).Parts[1] = c
		}},
		{name: "limits lifted", forge: func(cp *runlet.Checkpoint) { cp.Limits, cp.MaxTurns = nil, 1<<30 }},
		{name: "usage reset", forge: func(cp *runlet.Checkpoint) { cp.Usage = runlet.Usage{} }},
		{name: "options changed", forge: func(cp *runlet.Checkpoint) { cp.Options["big"] = 1.0 }},
		{name: "MAC removed", forge: func(cp *runlet.Checkpoint) { cp.MAC = "" }},
		{name: "MAC not hex", forge: func(cp *runlet.Checkpoint) { cp.MAC = strings.Repeat("zz", 32) }},
		{name: "MAC truncated", forge: func(cp *runlet.Checkpoint) { cp.MAC = cp.MAC[:32] }},
		{name: "saved under a key the Runtime dropped", key: [][]byte{macOldKey}, forge: func(*runlet.Checkpoint) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, agent, log, runID := macRun(t, runlet.WithCheckpointKey(macKey))
			cp, err := store.LoadCheckpoint(ctx, runID)
			if err != nil {
				t.Fatal(err)
			}
			tc.forge(cp)
			if err := store.SaveCheckpoint(ctx, cp); err != nil {
				t.Fatal(err)
			}
			key := tc.key
			if key == nil {
				key = [][]byte{macKey}
			}
			decide := tc.decide
			if decide == nil {
				decide = []runlet.Decision{runlet.Approve("d1"), runlet.Reject("d2", "no")}
			}
			rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithLogger(discardLogger()), runlet.WithCheckpointKey(key[0], key[1:]...))
			_, err = rt.Resume(ctx, agent, runID, decide...)
			if !errors.Is(err, runlet.ErrCheckpointMAC) || !errors.Is(err, runlet.ErrInvalidCheckpoint) {
				t.Fatalf("resume: %v; want ErrCheckpointMAC", err)
			}
			if got := log.list(); len(got) != 1 {
				t.Fatalf("ran %v", got)
			}
			for _, k := range [][]byte{macKey, macOldKey} {
				if strings.Contains(err.Error(), string(k)) || strings.Contains(err.Error(), hex.EncodeToString(k)) {
					t.Fatalf("the error shows a key: %v", err)
				}
			}
			if _, err := store.LoadCheckpoint(ctx, runID); err != nil {
				t.Fatalf("the refused checkpoint is gone: %v", err)
			}
		})
	}
}

func TestCheckpointKeyRefusesUnsignedCheckpoint(t *testing.T) {
	store, agent, log, runID := macRun(t) // saved without a key
	rt := runlet.NewRuntime(runlet.WithStore(store), runlet.WithCheckpointKey(macKey))
	if _, err := rt.Resume(context.Background(), agent, runID, runlet.Approve("d1"), runlet.Reject("d2", "no")); !errors.Is(err, runlet.ErrCheckpointMAC) {
		t.Fatalf("resume: %v; want ErrCheckpointMAC", err)
	}
	if got := log.list(); len(got) != 1 {
		t.Fatalf("ran %v", got)
	}
	// A Runtime without a key resumes it (and one with a key ignores
	// nothing: it was not signed).
	res, err := runlet.NewRuntime(runlet.WithStore(store)).Resume(context.Background(), agent, runID, runlet.Approve("d1"), runlet.Reject("d2", "no"))
	if err != nil || res.Status != runlet.StateFinished {
		t.Fatalf("resume without a key: %+v, %v", res, err)
	}
}

func TestCheckpointKeyNeverPrinted(t *testing.T) {
	rt := runlet.NewRuntime(runlet.WithCheckpointKey(macKey, macOldKey))
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		out := fmt.Sprintf(format, rt) + fmt.Sprintf(format, *rt)
		for _, k := range [][]byte{macKey, macOldKey} {
			for _, enc := range []string{string(k), hex.EncodeToString(k), fmt.Sprint(k), fmt.Sprintf("%#v", k), fmt.Sprintf("%q", k)} {
				if strings.Contains(out, enc) {
					t.Fatalf("%s of a Runtime shows a key: %s", format, out)
				}
			}
		}
	}
}

func TestCheckpointKeyTooShortPanics(t *testing.T) {
	for _, keys := range [][][]byte{{nil}, {[]byte("short")}, {macKey, []byte("short")}} {
		func() {
			defer func() {
				if v := recover(); v == nil || strings.Contains(fmt.Sprint(v), "short") {
					t.Fatalf("WithCheckpointKey(%d keys) recovered %v; want a panic that does not show the key", len(keys), v)
				}
			}()
			runlet.WithCheckpointKey(keys[0], keys[1:]...)
		}()
	}
}

// claimSwapStore gives Resume, on claim, another checkpoint than the one
// it loaded: a row changed between the two.
type claimSwapStore struct {
	runlet.Store
	swap func(cp *runlet.Checkpoint)
}

func (s *claimSwapStore) ClaimCheckpoint(ctx context.Context, runID string) (*runlet.Checkpoint, error) {
	cp, err := s.Store.ClaimCheckpoint(ctx, runID)
	if err == nil {
		s.swap(cp)
	}
	return cp, err
}

func TestResumeRefusesCheckpointChangedBeforeClaim(t *testing.T) {
	ctx := context.Background()
	store := runlet.NewMemoryStore()
	log := &ranLog{}
	agent := forgeableAgent(runlettest.NewModel(script()[0], runlettest.TextReply("Done.")), log)
	runID := interruptForged(t, runlet.NewRuntime(runlet.WithStore(store)), agent)
	swapped := &claimSwapStore{Store: store, swap: func(cp *runlet.Checkpoint) {
		lastCalls(cp).Parts = append(lastCalls(cp).Parts, runlettest.Call("d1", "delete_file", `{"path":"/etc/passwd"}`))
	}}
	rt := runlet.NewRuntime(runlet.WithStore(swapped), runlet.WithLogger(discardLogger()))
	if _, err := rt.Resume(ctx, agent, runID, runlet.Approve("d1"), runlet.Reject("d2", "no")); !errors.Is(err, runlet.ErrConflict) {
		t.Fatalf("resume: %v; want ErrConflict", err)
	}
	if got := log.list(); len(got) != 1 {
		t.Fatalf("ran %v", got)
	}
	// Put back as it was claimed: a resume that loads it again sees it
	// (and refuses it).
	_, err := runlet.NewRuntime(runlet.WithStore(store)).Resume(ctx, agent, runID, runlet.Approve("d1"), runlet.Reject("d2", "no"))
	if !errors.Is(err, runlet.ErrInvalidCheckpoint) {
		t.Fatalf("resume of the changed checkpoint: %v", err)
	}
}

func TestDuplicateCallIDsGetTheirOwn(t *testing.T) {
	ctx := context.Background()
	store := runlet.NewMemoryStore()
	log := &ranLog{}
	model := runlettest.NewModel(runlettest.ToolCallReply(
		runlettest.Call("d", "delete_file", `{"path":"/tmp/a"}`),
		runlettest.Call("d", "delete_file", `{"path":"/etc/passwd"}`),
		runlettest.Call("", "delete_file", `{"path":"/etc/shadow"}`),
		runlettest.Call("call_t1_2", "delete_file", `{"path":"/boot"}`),
	), runlettest.TextReply("Done."))
	agent := forgeableAgent(model, log)
	rt := runlet.NewRuntime(runlet.WithStore(store))
	res, err := rt.Run(ctx, agent, "clean up")
	if err != nil || len(res.Pending) != 4 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	ids := map[string]bool{}
	for _, c := range res.Pending {
		ids[c.ID] = true
	}
	if len(ids) != 4 || res.Pending[0].ID != "d" {
		t.Fatalf("pending %+v; want four distinct IDs, the first kept", res.Pending)
	}
	decide := []runlet.Decision{runlet.Approve("d")}
	for _, c := range res.Pending[1:] {
		decide = append(decide, runlet.Reject(c.ID, "no"))
	}
	if res, err = rt.Resume(ctx, agent, res.RunID, decide...); err != nil || res.Status != runlet.StateFinished {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if got := log.list(); strings.Join(got, ",") != "delete /tmp/a" {
		t.Fatalf("ran %v", got)
	}
}
