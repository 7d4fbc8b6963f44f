package runlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// FuzzResumeCheckpoint stores arbitrary bytes as a run's checkpoint and
// resumes it, as a store whose row someone edited would make Resume do.
// Whatever the bytes, Resume must not panic, must run nothing when it
// refuses the checkpoint, and must never run a call that needs approval
// without an approving decision for its ID. mode picks the decisions (none,
// approve every call the checkpoint lists as pending, reject them all,
// approve the first) and, with bit 2, a Runtime with a checkpoint key.
//
// The seeds (testdata/fuzz/FuzzResumeCheckpoint) are real checkpoints of
// fuzzAgent, top-level and nested, signed and not, and forgeries of them;
// RUNLET_FUZZ_SEEDS=1 go test -run TestFuzzSeeds writes them again.
func FuzzResumeCheckpoint(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.data, s.mode)
	}
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		_ = fuzzResume(t, data, mode)
	})
}

var fuzzKey = []byte("the fuzz test's checkpoint key..")

const fuzzRunID = "run_f"

// fuzzRecord records the tools that ran and the calls needing approval
// that ran, by ID.
type fuzzRecord struct {
	mu          sync.Mutex
	ran         int
	gatedRan    int
	gatedCallID []string
}

func (r *fuzzRecord) tool(gated bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran++
	if gated {
		r.gatedRan++
	}
}

// fuzzModel answers from its script, then with text.
type fuzzModel struct {
	mu    sync.Mutex
	calls int
	reply []*ModelResponse
}

func (m *fuzzModel) Generate(ctx context.Context, req *ModelRequest) (*ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if len(m.reply) > 0 {
		r := m.reply[0]
		m.reply = m.reply[1:]
		return r, nil
	}
	return &ModelResponse{Message: AssistantText("done"), FinishReason: FinishStop}, nil
}

func (m *fuzzModel) Stream(ctx context.Context, req *ModelRequest) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		resp, err := m.Generate(ctx, req)
		yield(StreamEvent{Kind: StreamDone, Response: resp}, err)
	}
}

func callsReply(calls ...ToolCallPart) *ModelResponse {
	m := Message{Role: RoleAssistant}
	for _, c := range calls {
		m.Parts = append(m.Parts, c)
	}
	return &ModelResponse{Message: m, FinishReason: FinishToolCalls}
}

type fuzzIn struct {
	X string `json:"x,omitempty"`
}

// fuzzAgent is "top": "gated" needs approval, "free" does not, "helper"
// is an agent called as a tool whose "inner_gated" needs approval, and
// "boss" the same agent as a tool that itself needs approval.
func fuzzAgent(rec *fuzzRecord, top, inner *fuzzModel) *Agent {
	tool := func(name string, gated bool) Tool {
		var opts []ToolOption
		if gated {
			opts = append(opts, WithApproval())
		}
		return NewTool(name, name, func(ctx context.Context, in fuzzIn) (string, error) {
			rec.tool(gated)
			if gated {
				return "gated ran", nil
			}
			return "free ran", nil
		}, opts...)
	}
	helper := &Agent{Name: "helper", Model: inner, Tools: []Tool{tool("inner_gated", true), tool("free", false)}}
	bossAgent := *helper
	bossAgent.Name = "boss"
	return &Agent{Name: "top", Model: top, Tools: []Tool{
		tool("gated", true), tool("free", false), helper.AsTool(), bossAgent.AsTool(WithApproval()),
	}}
}

// fuzzResume resumes data with mode and checks the rules; it returns
// Resume's error.
func fuzzResume(t *testing.T, data []byte, mode byte) error {
	ctx := context.Background()
	rec := &fuzzRecord{}
	top, inner := &fuzzModel{}, &fuzzModel{}
	agent := fuzzAgent(rec, top, inner)
	store := NewMemoryStore().(*memoryStore)
	store.checkpoints[fuzzRunID] = slices.Clone(data)
	hooks := Hooks{AfterToolCall: func(ctx context.Context, c ToolCallPart, res *ToolResultPart) error {
		if !res.IsError && res.Content == "gated ran" {
			rec.mu.Lock()
			rec.gatedCallID = append(rec.gatedCallID, c.ID)
			rec.mu.Unlock()
		}
		return nil
	}}
	opts := []RuntimeOption{WithStore(store), WithHooks(hooks), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithMaxTurns(4)}
	if mode&4 != 0 {
		opts = append(opts, WithCheckpointKey(fuzzKey))
	}

	// The caller decides on the calls the checkpoint lists, as a program
	// showing a stored checkpoint to a human would.
	var listed []ToolCallPart
	var cp Checkpoint
	if json.Unmarshal(data, &cp) == nil {
		listed = pendingCalls(&cp)
	}
	var decisions []Decision
	approved := map[string]bool{}
	for i, c := range listed {
		switch mode & 3 {
		case 1:
			decisions = append(decisions, Approve(c.ID))
			approved[c.ID] = true
		case 2:
			decisions = append(decisions, Reject(c.ID, "no"))
		case 3:
			if i == 0 {
				decisions = append(decisions, Approve(c.ID))
				approved[c.ID] = true
			} else {
				decisions = append(decisions, Reject(c.ID, "no"))
			}
		}
	}

	_, err := NewRuntime(opts...).Resume(ctx, agent, fuzzRunID, decisions...)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.gatedRan != len(rec.gatedCallID) {
		t.Fatalf("%d calls needing approval ran, %d reported", rec.gatedRan, len(rec.gatedCallID))
	}
	for _, id := range rec.gatedCallID {
		if !approved[id] {
			t.Fatalf("call %q needing approval ran without an approving decision (decisions %+v, err %v)", id, decisions, err)
		}
	}
	if errors.Is(err, ErrInvalidCheckpoint) {
		if rec.ran != 0 || top.calls+inner.calls != 0 {
			t.Fatalf("a refused checkpoint ran %d tools and %d model calls: %v", rec.ran, top.calls+inner.calls, err)
		}
		if _, ok := store.checkpoints[fuzzRunID]; !ok {
			t.Fatalf("a refused checkpoint was consumed: %v", err)
		}
	}
	if mode&4 != 0 && err == nil && cp.MAC == "" {
		t.Fatal("a checkpoint without a MAC resumed under a key")
	}
	return err
}

type fuzzSeed struct {
	name string
	data []byte
	mode byte
	ok   bool // resumes
}

// fuzzSeeds interrupts fuzzAgent in a few ways and returns the
// checkpoints, some signed, and forgeries of them.
func fuzzSeeds(t testing.TB) []fuzzSeed {
	interrupt := func(top, inner []*ModelResponse) *Checkpoint {
		store := NewMemoryStore()
		agent := fuzzAgent(&fuzzRecord{}, &fuzzModel{reply: top}, &fuzzModel{reply: inner})
		res, err := NewRuntime(WithStore(store)).Run(context.Background(), agent, "go", WithRunID(fuzzRunID))
		if err != nil || res.Status != StateInterrupted {
			t.Fatalf("seed run: %+v, %v", res, err)
		}
		cp, err := store.LoadCheckpoint(context.Background(), fuzzRunID)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	call := func(id, name, args string) ToolCallPart {
		return ToolCallPart{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	flat := interrupt([]*ModelResponse{callsReply(call("f1", "free", `{}`), call("g1", "gated", `{"x":"a"}`), call("g2", "gated", `{}`))}, nil)
	nested := interrupt([]*ModelResponse{callsReply(call("h1", "helper", `{"input":"go"}`), call("g1", "gated", `{}`))},
		[]*ModelResponse{callsReply(call("i1", "inner_gated", `{}`), call("f2", "free", `{}`))})
	boss := interrupt([]*ModelResponse{callsReply(call("b1", "boss", `{"input":"go"}`))}, nil)

	enc := func(cp *Checkpoint) []byte {
		b, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	signed := func(cp *Checkpoint) []byte {
		c := *cp
		keys := &Runtime{}
		WithCheckpointKey(fuzzKey).applyRuntime(keys)
		if err := keys.checkpointKeys.sign(&c); err != nil {
			t.Fatal(err)
		}
		return enc(&c)
	}
	forge := func(cp *Checkpoint, f func(c *Checkpoint)) []byte {
		var c Checkpoint
		if err := json.Unmarshal(enc(cp), &c); err != nil {
			t.Fatal(err)
		}
		f(&c)
		return enc(&c)
	}
	seeds := []fuzzSeed{
		{"flat", enc(flat), 1, true},
		{"flat_reject", enc(flat), 2, true},
		{"flat_signed", signed(flat), 1 | 4, true},
		{"nested", enc(nested), 3, true},
		{"nested_signed", signed(nested), 1 | 4, true},
		{"boss", enc(boss), 1, true},
		{"forged_nested_on_gated", forge(flat, func(c *Checkpoint) {
			c.Nested = map[string]*Checkpoint{"g1": nested.Nested["h1"]}
			c.Pending = c.Pending[1:]
		}), 1, false},
		{"forged_duplicate_id", forge(flat, func(c *Checkpoint) {
			m := &c.Messages[len(c.Messages)-1]
			m.Parts = append(m.Parts, call("g1", "gated", `{"x":"evil"}`))
		}), 1, false},
		{"forged_result", forge(flat, func(c *Checkpoint) {
			c.Pending = c.Pending[1:]
			c.Results = append(c.Results, ToolResultPart{CallID: "g1", Name: "gated", Content: "gated ran"})
		}), 2, true},
		{"empty_messages", forge(flat, func(c *Checkpoint) { c.Messages = nil }), 1, false},
		{"bad_view_at", forge(flat, func(c *Checkpoint) { c.ViewAt = -1 }), 1, false},
		{"null_nested", []byte(`{"run_id":"run_f","messages":[{"role":"assistant","parts":[{"type":"tool_call","id":"h1","name":"helper"}]}],"nested":{"h1":null}}`), 1, false},
		{"not_json", []byte(`{"run_id":"run_f","messages":[`), 1, false},
	}
	return seeds
}

// TestFuzzSeeds runs the seeds and, with RUNLET_FUZZ_SEEDS=1, writes them
// to testdata/fuzz/FuzzResumeCheckpoint.
func TestFuzzSeeds(t *testing.T) {
	seeds := fuzzSeeds(t)
	write := os.Getenv("RUNLET_FUZZ_SEEDS") == "1"
	dir := filepath.Join("testdata", "fuzz", "FuzzResumeCheckpoint")
	if write {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range seeds {
		t.Run(s.name, func(t *testing.T) {
			if err := fuzzResume(t, s.data, s.mode); (err == nil) != s.ok {
				t.Fatalf("resume: %v; want success %v", err, s.ok)
			}
		})
		if write {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nbyte(%q)\n", s.data, rune(s.mode))
			if err := os.WriteFile(filepath.Join(dir, s.name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
