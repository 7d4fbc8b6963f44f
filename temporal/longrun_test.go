package temporal

import (
	"context"
	"fmt"
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
func longAgent(turns, size int) *runlet.Agent {
	fetch := runlet.NewTool("fetch", "Fetches a page.", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (string, error) {
		return fmt.Sprintf("page %d:", in.N) + strings.Repeat("x", size), nil
	})
	model := &runlettest.Model{Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		n, seen := 0, 0
		for _, m := range req.Messages {
			switch m.Role {
			case runlet.RoleAssistant:
				n++
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
// total size, and its largest payload.
type historyStats struct {
	events, bytes, maxPayload int
	perTurn                   []int // the history's size after each model call
}

func stats(t *testing.T, c client.Client, workflowID string) historyStats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var s historyStats
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		s.events++
		s.bytes += ev.Size()
		s.maxPayload = max(s.maxPayload, ev.Size())
		if ev.GetEventType() == enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
			s.perTurn = append(s.perTurn, s.bytes)
		}
	}
	return s
}

func TestLongRunHistory(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	const turns, size = 3, 4 << 10
	store := runlet.NewMemoryStore()
	d := mustNew(t, Config{Agents: []*runlet.Agent{longAgent(turns, size)}, Sessions: store})
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
	res, err := Wait(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("read %d pages", turns); res.Output != want {
		t.Fatalf("output %q, want %q", res.Output, want)
	}
	st := stats(t, c, id)
	t.Logf("%d turns of %d-byte results: %d events, %d bytes, largest event %d bytes", turns, size, st.events, st.bytes, st.maxPayload)
	record(t, c, id, "long_v0")
}
