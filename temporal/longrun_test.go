package temporal

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// longAgent calls its "fetch" tool once a turn for turns turns, each call
// returning size bytes, then answers with how many results it saw.
func longAgent(turns, size int) *runlet.Agent { return longAgentWith(turns, size, nil) }

// longAgentWith is longAgent whose tool calls onFetch (when not nil)
// before it answers.
func longAgentWith(turns, size int, onFetch func(ctx context.Context, n int) error) *runlet.Agent {
	fetch := runlet.NewTool("fetch", "Fetches a page.", func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		if onFetch != nil {
			if err := onFetch(ctx, in.N); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("page %d:", in.N) + strings.Repeat("x", size), nil
	})
	model := &runlettest.Model{Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		n, seen := 0, 0
		for _, m := range req.Messages {
			switch m.Role {
			case runlet.RoleAssistant:
				if len(m.ToolCalls()) > 0 {
					n++
				}
			case runlet.RoleTool:
				for _, r := range toolResults(m) {
					if strings.HasPrefix(r.Content, "page ") && len(r.Content) >= size {
						seen++
					}
				}
			}
		}
		if n < turns {
			return runlettest.ToolCallReply(runlettest.Call(fmt.Sprintf("f%d", n), "fetch", fmt.Sprintf(`{"n":%d}`, n)))
		}
		return runlettest.TextReply(fmt.Sprintf("read %d pages", seen))
	}}
	return &runlet.Agent{Name: "long", Model: model, Tools: []runlet.Tool{fetch}}
}

// historyStats is what a workflow's history weighs: its events, their
// total size, and its largest event (which holds its largest payload).
type historyStats struct {
	events, bytes, maxEvent int
	perTurn                 []int // the history's size after each model call
}

func stats(t *testing.T, c client.Client, workflowID string) historyStats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var s historyStats
	models := map[int64]bool{} // scheduled event IDs of model activities
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		s.events++
		s.bytes += ev.Size()
		s.maxEvent = max(s.maxEvent, ev.Size())
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == ModelActivityName {
			models[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && models[a.GetScheduledEventId()] {
			s.perTurn = append(s.perTurn, s.bytes)
		}
	}
	return s
}

// longRun runs longAgent for turns turns of size-byte results on a worker
// with cfg (its Agents and Sessions set here) and returns the run's
// history's stats.
func longRun(t *testing.T, cfg Config, turns, size int) (*runlet.Result, historyStats, string) {
	t.Helper()
	s := startServer(t)
	c := dial(t, s)
	store := runlet.NewMemoryStore()
	cfg.Agents, cfg.Sessions = []*runlet.Agent{longAgent(turns, size)}, store
	d := mustNew(t, cfg)
	queue := "long-" + t.Name()
	w := worker.New(c, queue, workerOptions())
	d.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	id := uniqueID("long")
	run, err := Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		RunInput{Agent: "long", Input: "read them all", SessionID: "long-" + id, MaxTurns: turns + 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Wait(ctx, run, cfg.Payloads)
	if err != nil {
		t.Fatal(err)
	}
	// The model saw every page in full: the transcript resolved.
	if want := fmt.Sprintf("read %d pages", turns); res.Output != want {
		t.Fatalf("output %q, want %q", res.Output, want)
	}
	if len(res.Messages) != 2*turns+2 {
		t.Fatalf("%d messages, want %d", len(res.Messages), 2*turns+2)
	}
	// Wait read the results back, and the session holds them in full.
	hist, err := store.LoadSession(ctx, "long-"+id)
	if err != nil || len(hist) != len(res.Messages) {
		t.Fatalf("session: %d messages, %v", len(hist), err)
	}
	for i, m := range hist {
		if jsonString(m) != jsonString(res.Messages[i]) {
			t.Fatalf("message %d: session %.200s, result %.200s", i, jsonString(m), jsonString(res.Messages[i]))
		}
		for _, r := range toolResults(m) {
			if len(r.Content) < size {
				t.Fatalf("message %d: result of %d bytes, want the page in full", i, len(r.Content))
			}
		}
	}
	return res, stats(t, c, id), id
}

// TestLongRunHistoryStaysSmall runs 200 turns, each with a 20 KiB tool
// result, with a payload store: the history grows with what each turn adds
// (a stand-in, a Ref, the assistant's call), not with the conversation.
func TestLongRunHistoryStaysSmall(t *testing.T) {
	const turns, size = 200, 20 << 10
	payloads := NewMemoryPayloadStore()
	_, st, _ := longRun(t, Config{Payloads: payloads}, turns, size)
	for i, b := range st.perTurn {
		if i < 3 || (i+1)%25 == 0 {
			t.Logf("after model call %3d: history %8d bytes", i+1, b)
		}
	}
	n, stored := payloads.Stats()
	t.Logf("%d turns of %d-byte results: %d events, history %d bytes (%d per turn), largest event %d bytes; payload store: %d payloads, %d bytes",
		turns, size, st.events, st.bytes, st.bytes/turns, st.maxEvent, n, stored)
	if st.bytes >= 5<<20 || st.maxEvent >= 1<<20 {
		t.Fatalf("history %d bytes (bound 5 MiB), largest event %d bytes (bound 1 MiB)", st.bytes, st.maxEvent)
	}
	// What each turn adds stays the same: the last turns add no more than
	// the first ones (bar noise), where without the store each model call
	// carried the whole conversation.
	if len(st.perTurn) != turns+1 {
		t.Fatalf("%d model calls in the history, want %d", len(st.perTurn), turns+1)
	}
	early := st.perTurn[10] - st.perTurn[9]
	late := st.perTurn[turns-1] - st.perTurn[turns-2]
	if late > 2*early {
		t.Fatalf("turn 10 added %d bytes to the history, turn %d added %d: it grows with the conversation", early, turns-1, late)
	}
}

// TestLongRunHistoryWithoutStore measures the same run, shorter, without a
// payload store: the size the store saves.
func TestLongRunHistoryWithoutStore(t *testing.T) {
	const turns, size = 20, 20 << 10
	_, st, _ := longRun(t, Config{}, turns, size)
	t.Logf("without a payload store, %d turns of %d-byte results: %d events, history %d bytes, largest event %d bytes",
		turns, size, st.events, st.bytes, st.maxEvent)
}

// TestLongRunHistoryRecorded records a short long-conversation run for the
// replay tests (long_v0.json was recorded before the payload store, with
// this agent).
func TestLongRunHistoryRecorded(t *testing.T) {
	s := startServer(t)
	_, _, id := longRun(t, Config{Payloads: NewMemoryPayloadStore(), InlineLimit: 1 << 10}, 3, 4<<10)
	record(t, dial(t, s), id, "long_payloads")
}

// TestLongRunSurvivesACrash kills the worker in the middle of a 30-turn
// conversation kept in a payload store shared by the workers' processes
// (a directory): the new worker, whose cache is empty, reads the
// transcript back from the store and finishes the run.
func TestLongRunSurvivesACrash(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	dir := t.TempDir()
	t.Setenv(payloadDirEnv, dir)
	queue := "longcrash-" + t.Name()
	a := startChild(t, s, "A", queue, log.path)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := uniqueID("longcrash")
	run, err := Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue},
		RunInput{Agent: "long", Input: "read them all", MaxTurns: childLongTurns + 1})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "worker A to start fetch 12", func() bool { return log.count("fetch:12:A") == 1 })
	a.kill()
	startChild(t, s, "B", queue, log.path)
	payloads, err := NewDirPayloadStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Wait(ctx, run, payloads)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("read %d pages", childLongTurns); res.Output != want {
		t.Fatalf("output %q, want %q", res.Output, want)
	}
	for prefix, want := range map[string]int{"fetch:0:A": 1, "fetch:11:A": 1, "fetch:12:A": 1, "fetch:12:B": 1, "fetch:13:B": 1, "fetch:29:B": 1, "fetch:": childLongTurns + 1} {
		if got := log.count(prefix); got != want {
			t.Errorf("%s ran %d times, want %d", prefix, got, want)
		}
	}
	for _, m := range res.Messages {
		for _, r := range toolResults(m) {
			if len(r.Content) < childLongSize {
				t.Fatalf("a result of %d bytes: not read back", len(r.Content))
			}
		}
	}
	st := stats(t, c, id)
	t.Logf("%d turns, crash at 12: %d events, history %d bytes, largest event %d bytes", childLongTurns, st.events, st.bytes, st.maxEvent)
}
