package runlet_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// summaryProcess is one "process": a fresh Summarizer (with its own
// in-memory cache) and Runtime over a shared store. It runs prompt in
// session "s" and returns the summariser's call count and the context notes.
func summaryProcess(t *testing.T, store runlet.Store, cfg runlet.SummarizerConfig, prompt string, opts ...runlet.RunOption) (calls int, notes []string, first string) {
	t.Helper()
	summaries := runlettest.NewModel()
	summaries.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		return runlettest.TextReply(fmt.Sprintf("summary of %d bytes", len(req.Messages[0].Text())))
	}
	cfg.Model = summaries
	if cfg.Keep == 0 {
		cfg.Keep, cfg.Batch = 1, 1
	}
	obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
		if e, ok := ev.(*runlet.ContextPrepared); ok {
			notes = append(notes, e.Notes...)
		}
	})
	rt := runlet.NewRuntime(runlet.WithPreparers(runlet.Summarizer(cfg)), runlet.WithStore(store), runlet.WithObservers(obs))
	agentModel := runlettest.NewModel(runlettest.TextReply("ok"))
	if opts == nil {
		opts = []runlet.RunOption{runlet.WithSession("s")}
	}
	if _, err := rt.Run(context.Background(), &runlet.Agent{Model: agentModel}, prompt, opts...); err != nil {
		t.Fatal(err)
	}
	return len(summaries.Requests()), notes, agentModel.Requests()[0].Messages[0].Text()
}

// newSummarySession returns a memory store whose session "s" holds
// conversation(4): with Keep 1 and Batch 1, the next run summarises.
func newSummarySession(t *testing.T) runlet.Store {
	t.Helper()
	st := runlet.NewMemoryStore()
	if err := st.AppendSession(context.Background(), "s", 0, conversation(4)); err != nil {
		t.Fatal(err)
	}
	return st
}

// A second Runtime over the same store (a restarted process) reuses the
// summary the first one stored and makes no summariser call.
func TestSummarizerReusesStoredSummary(t *testing.T) {
	st := newSummarySession(t)
	calls, _, first1 := summaryProcess(t, st, runlet.SummarizerConfig{}, "now")
	if calls != 1 || !strings.Contains(first1, "summary of") {
		t.Fatalf("first process: %d summariser calls, first message %q", calls, first1)
	}
	calls, notes, first2 := summaryProcess(t, st, runlet.SummarizerConfig{}, "again")
	if calls != 0 || first2 != first1 {
		t.Fatalf("second process: %d summariser calls, first message %q, notes %q", calls, first2, notes)
	}
	// Another Name, Prompt or NoStore does not reuse it.
	for _, cfg := range []runlet.SummarizerConfig{{Name: "other"}, {Prompt: "Summarise tersely."}, {NoStore: true}} {
		if calls, _, _ := summaryProcess(t, st, cfg, "more"); calls != 1 {
			t.Errorf("%+v: %d summariser calls, want 1", cfg, calls)
		}
	}
}

// A stored summary of a history that has since changed is recomputed.
func TestSummarizerStoredSummaryOfChangedHistory(t *testing.T) {
	st := newSummarySession(t)
	summaryProcess(t, st, runlet.SummarizerConfig{}, "now")
	row, err := st.GetState(context.Background(), "s", "runlet.summarizer/default")
	if err != nil {
		t.Fatal(err)
	}
	// The same row beside a history that differs in its first message.
	other := runlet.NewMemoryStore()
	hist := conversation(4)
	hist[0] = runlet.UserText("a different first question")
	if err := other.AppendSession(context.Background(), "s", 0, append(hist, runlet.UserText("now"), runlet.AssistantText("ok"))); err != nil {
		t.Fatal(err)
	}
	if err := other.SetState(context.Background(), "s", "runlet.summarizer/default", row); err != nil {
		t.Fatal(err)
	}
	calls, notes, _ := summaryProcess(t, other, runlet.SummarizerConfig{}, "again")
	if calls != 1 || !strings.Contains(strings.Join(notes, "\n"), "ignored the stored summary (for another history)") {
		t.Fatalf("%d summariser calls, notes %q", calls, notes)
	}
}

// A corrupted or forged row is ignored and recomputed, never trusted
// blindly and never failing the run; the recomputed summary replaces it.
func TestSummarizerCorruptStoredSummary(t *testing.T) {
	st := newSummarySession(t)
	summaryProcess(t, st, runlet.SummarizerConfig{}, "now")
	row, err := st.GetState(context.Background(), "s", "runlet.summarizer/default")
	if err != nil {
		t.Fatal(err)
	}
	good := string(row)
	for _, tc := range []struct{ name, row, reason string }{
		{"not JSON", "\x00garbage", "malformed"},
		{"unknown field", strings.Replace(good, `"v":1`, `"v":1,"x":2`, 1), "malformed"},
		{"trailing data", good + good, "malformed"},
		{"empty text", replaceField(t, good, "text", `""`), "malformed"},
		{"other version", strings.Replace(good, `"v":1`, `"v":2`, 1), "another summariser configuration"},
		{"other config", replaceField(t, good, "config", `"00"`), "another summariser configuration"},
		{"wrong hash", replaceField(t, good, "hash", `"00"`), "another history"},
		{"up_to past the end", replaceField(t, good, "up_to", `99`), "another history"},
		{"up_to mid-turn", replaceField(t, good, "up_to", `3`), "another history"},
		{"negative up_to", replaceField(t, good, "up_to", `-1`), "another history"},
		{"too large", strings.Replace(good, `"text":"`, `"text":"`+strings.Repeat("x", 300<<10), 1), "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newSummarySession(t)
			if err := st.SetState(context.Background(), "s", "runlet.summarizer/default", []byte(tc.row)); err != nil {
				t.Fatal(err)
			}
			calls, notes, first := summaryProcess(t, st, runlet.SummarizerConfig{}, "now")
			if calls != 1 || !strings.Contains(strings.Join(notes, "\n"), tc.reason+")") || strings.Contains(first, "xxxx") {
				t.Fatalf("%d summariser calls, notes %q, first message %.60q", calls, notes, first)
			}
			if calls, _, _ := summaryProcess(t, st, runlet.SummarizerConfig{}, "again"); calls != 0 {
				t.Fatalf("the recomputed summary was not stored: %d calls", calls)
			}
		})
	}
}

// replaceField replaces the value of a top-level field in a stored row.
func replaceField(t *testing.T, row, field, value string) string {
	t.Helper()
	i := strings.Index(row, `"`+field+`":`)
	if i < 0 {
		t.Fatalf("no %s in %s", field, row)
	}
	start := i + len(field) + 3
	end := start
	if row[start] == '"' {
		end = start + 1 + strings.Index(row[start+1:], `"`) + 1
	} else {
		for row[end] != ',' && row[end] != '}' {
			end++
		}
	}
	return row[:start] + value + row[end:]
}

// countingStore counts state writes.
type countingStore struct {
	runlet.Store
	sets atomic.Int32
}

func (s *countingStore) SetState(ctx context.Context, session, key string, value []byte) error {
	s.sets.Add(1)
	return s.Store.SetState(ctx, session, key, value)
}

// Without a session, or with NoStore, the summary is not stored.
func TestSummarizerStoresOnlyWithSession(t *testing.T) {
	st := &countingStore{Store: runlet.NewMemoryStore()}
	calls, _, _ := summaryProcess(t, st, runlet.SummarizerConfig{}, "now", runlet.WithHistory(conversation(4)...))
	if calls != 1 || st.sets.Load() != 0 {
		t.Fatalf("without a session: %d summariser calls, %d state writes", calls, st.sets.Load())
	}
	if err := st.AppendSession(context.Background(), "s", 0, conversation(4)); err != nil {
		t.Fatal(err)
	}
	calls, _, _ = summaryProcess(t, st, runlet.SummarizerConfig{NoStore: true}, "now")
	if calls != 1 || st.sets.Load() != 0 {
		t.Fatalf("NoStore: %d summariser calls, %d state writes", calls, st.sets.Load())
	}
	summaryProcess(t, st, runlet.SummarizerConfig{}, "again")
	if st.sets.Load() != 1 {
		t.Fatalf("with a session: %d state writes", st.sets.Load())
	}
}

// Batch holds: a summary is extended only once more than Keep+Batch turns
// have accumulated after it, not on every turn past the threshold.
func TestSummarizerBatches(t *testing.T) {
	summaries := runlettest.NewModel()
	summaries.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply { return runlettest.TextReply("s") }
	rt := runlet.NewRuntime(runlet.WithPreparers(runlet.Summarizer(runlet.SummarizerConfig{Model: summaries, Keep: 1, Batch: 2})), runlet.WithStore(runlet.NewMemoryStore()))
	agentModel := runlettest.NewModel()
	agentModel.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		return runlettest.TextReply("ok")
	}
	for i := range 8 {
		if _, err := rt.Run(context.Background(), &runlet.Agent{Model: agentModel}, fmt.Sprint("turn ", i), runlet.WithSession("s")); err != nil {
			t.Fatal(err)
		}
	}
	// Run 4 (4 turns) summarises 3, run 7 (7 turns, 4 after the summary)
	// extends it to 6; runs 5, 6 and 8 reuse what is there.
	if n := len(summaries.Requests()); n != 2 {
		t.Fatalf("summariser called %d times in 8 runs, want 2", n)
	}
}
