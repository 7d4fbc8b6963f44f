package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// recordEnv, when set, makes the integration tests write the histories of
// their workflows to testdata/histories, for the replay tests.
const recordEnv = "RUNLET_TEMPORAL_RECORD"

func TestRealServerRun(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	var count counter
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`), runlettest.Call("c2", "get_weather", `{"city":"Rome"}`)),
		runlettest.TextReply("Paris and Rome are sunny."),
	)
	model.ChunkSize = 5
	store := runlet.NewMemoryStore()
	rec := &recorder{}
	d := mustNew(t, Config{
		Agents:    []*runlet.Agent{{Name: "weather", Model: model, Tools: []runlet.Tool{weatherTool(&count)}}},
		Observers: []runlet.Observer{rec},
		Sessions:  store,
		Stream:    true,
	})
	w := worker.New(c, "real-"+t.Name(), workerOptions())
	d.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := uniqueID("weather")
	run, err := Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: "real-" + t.Name()},
		RunInput{Agent: "weather", Input: "Weather in Paris and Rome?", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Wait(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "Paris and Rome are sunny." || res.RunID != id || res.Turns != 2 || len(res.Messages) != 4 {
		t.Fatalf("result %+v", res)
	}
	p, err := GetProgress(ctx, c, id)
	if err != nil || p.State != runlet.StateFinished || p.Turn != 2 || p.ToolCalls != 2 || p.Usage.Requests != 2 {
		t.Fatalf("progress %+v, %v", p, err)
	}
	if hist, _ := store.LoadSession(ctx, "s1"); len(hist) != 4 {
		t.Fatalf("session holds %d messages, want 4", len(hist))
	}
	var deltas []string
	for _, ev := range rec.all() {
		if td, ok := ev.(*runlet.TextDelta); ok {
			deltas = append(deltas, td.Delta)
		}
	}
	if strings.Join(deltas, "") != res.Output || len(deltas) < 2 {
		t.Fatalf("text deltas %q", deltas)
	}
	record(t, c, id, "run")
}

func TestCrashedWorkerIsReplaced(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	queue := "crash-" + t.Name()
	a := startChild(t, s, "A", queue, log.path)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := uniqueID("trip")
	run, err := Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, RunInput{Agent: "trip", Input: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	// Worker A completes the first model call, both weather calls and the
	// second model call, and dies in the middle of the "hold" call.
	waitFor(t, "worker A to start the hold call", func() bool { return log.count("tool:hold:A") == 1 })
	a.kill()
	startChild(t, s, "B", queue, log.path)

	res, err := Wait(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if want := "trip: held by B"; res.Output != want || res.Turns != 3 {
		t.Fatalf("output %q turns %d, want %q after 3 turns", res.Output, res.Turns, want)
	}
	// What completed ran once, on A; what was cut off ran again, on B.
	for prefix, want := range map[string]int{
		"model:1:": 1, "model:2:": 1, "tool:Paris:": 1, "tool:Rome:": 1, "tool:hold:": 2, "model:3:": 1,
		"model:1:A": 1, "model:2:A": 1, "tool:Paris:A": 1, "tool:Rome:A": 1, "tool:hold:A": 1, "tool:hold:B": 1, "model:3:B": 1,
	} {
		if got := log.count(prefix); got != want {
			t.Errorf("%s ran %d times, want %d; log: %v", prefix, got, want, log.lines())
		}
	}
	record(t, c, id, "crash")
}

func TestApprovalAcrossWorkerRestart(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	queue := "approve-" + t.Name()
	a := startChild(t, s, "A", queue, log.path)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := uniqueID("mail")
	run, err := Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, RunInput{Agent: "mailer", Input: "mail it"})
	if err != nil {
		t.Fatal(err)
	}
	var pending []runlet.ToolCallPart
	waitFor(t, "the pending call", func() bool {
		pending, err = Pending(ctx, c, id)
		return err == nil && len(pending) == 1
	})
	if pending[0].ID != "m1" || pending[0].Name != "send_mail" {
		t.Fatalf("pending %+v", pending)
	}
	a.kill() // the run waits in the server, with no worker at all
	startChild(t, s, "B", queue, log.path)
	if err := Decide(ctx, c, id, runlet.Approve("wrong")); err == nil {
		t.Fatal("a decision for no pending call was accepted")
	}
	if err := Decide(ctx, c, id, runlet.ApproveWithArguments("m1", json.RawMessage(`{"city":"Final"}`))); err != nil {
		t.Fatal(err)
	}
	res, err := Wait(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "mailer: sent Final" {
		t.Fatalf("output %q", res.Output)
	}
	lines := log.lines()
	if log.count("tool:mail:") != 1 || log.count("tool:mail:B:"+id+"/") != 1 || log.count("model:1:") != 1 {
		t.Fatalf("log %v: want one execution, on B, with an idempotency key from the activity", lines)
	}
	record(t, c, id, "approval")
}

func TestWaitReturnsPolicyErrorAndPartialResult(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	model := &runlettest.Model{Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
		return runlettest.ToolCallReply(runlettest.Call("", "get_weather", `{"city":"Rome"}`))
	}}
	var count counter
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "loop", Model: model, Tools: []runlet.Tool{weatherTool(&count)}}}})
	w := worker.New(c, "policy-"+t.Name(), workerOptions())
	d.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := uniqueID("loop")
	run, err := Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: "policy-" + t.Name()}, RunInput{Agent: "loop", Input: "x", MaxTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Wait(ctx, run)
	var pe *runlet.PolicyError
	if !errors.As(err, &pe) || pe.Policy != "max_turns" || !errors.Is(err, runlet.ErrMaxTurns) {
		t.Fatalf("error %v, want a max_turns PolicyError", err)
	}
	if res == nil || res.Turns != 2 || res.Status != runlet.StateFailed || count.get("Rome") != 2 {
		t.Fatalf("partial result %+v", res)
	}
	record(t, c, id, "max_turns")
}

var ids atomic.Int64

// uniqueID returns a workflow ID not used before by this test process
// (tests may run several times against one server: -count).
func uniqueID(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, ids.Add(1))
}

// record writes the workflow's history to testdata/histories/name.json
// when RUNLET_TEMPORAL_RECORD is set.
func record(t *testing.T, c client.Client, workflowID, name string) {
	t.Helper()
	if os.Getenv(recordEnv) == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata/histories", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata/histories", name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
