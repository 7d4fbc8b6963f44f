package temporal

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
	"go.temporal.io/sdk/client"
)

type forecast struct {
	City string `json:"city"`
	Temp int    `json:"temp"`
}

// typedModel calls get_weather, then answers without "temp" until it is
// told what is wrong badAnswers times.
func typedModel(badAnswers int) *runlettest.Model {
	return &runlettest.Model{Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		told := 0
		for _, m := range req.Messages {
			if strings.Contains(m.Text(), "Your answer was rejected") {
				told++
			}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == runlet.RoleUser && told == 0 {
			return runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Paris"}`))
		}
		if told < badAnswers {
			return runlettest.TextReply(`{"city":"Paris"}`)
		}
		return runlettest.TextReply(`{"city":"Paris","temp":21}`)
	}}
}

func TestTypedOutputIsCheckedAndRepaired(t *testing.T) {
	var c counter
	model := typedModel(1)
	rec := &recorder{}
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: model, Tools: []runlet.Tool{weatherTool(&c)}}}, Observers: []runlet.Observer{rec}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "weather?", Output: runlet.OutputFor[forecast]()})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Output != `{"city":"Paris","temp":21}` || res.Usage.Requests != 3 || res.Turns != 3 {
		t.Fatalf("output %q, %d requests, %d turns", res.Output, res.Usage.Requests, res.Turns)
	}
	// input, call, result, rejected answer, what was wrong, answer
	if len(res.Messages) != 6 || !strings.Contains(res.Messages[4].Text(), "temp") {
		t.Fatalf("messages %s", jsonString(res.Messages))
	}
	// The request carried the schema (native mode).
	if reqs := model.Requests(); reqs[0].OutputSchema == nil || reqs[0].OutputSchema.Name != "forecast" {
		t.Fatalf("request schema %+v", reqs[0].OutputSchema)
	}
	var checked []bool
	for _, ev := range rec.all() {
		if oc, ok := ev.(*runlet.OutputChecked); ok {
			checked = append(checked, oc.Valid)
		}
	}
	if jsonString(checked) != "[false,true]" {
		t.Fatalf("output.checked events %v", checked)
	}
}

func TestTypedOutputFailsAfterLastRepair(t *testing.T) {
	var c counter
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: typedModel(5), Tools: []runlet.Tool{weatherTool(&c)},
		OutputSchema: runlet.OutputFor[forecast]()}}})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "weather?", OutputRetries: 1})
	app, fd := failure(t, e.GetWorkflowError())
	if app.Type() != ErrTypeOutput || fd.Output == nil || fd.Output.Attempts != 2 || fd.Output.Raw != `{"city":"Paris"}` || fd.Result == nil {
		t.Fatalf("error %v type %s, details %+v", app, app.Type(), fd.Output)
	}
	var oe *runlet.OutputError
	if err := error(fd.Output); !errors.As(err, &oe) || !strings.Contains(oe.Error(), "temp") {
		t.Fatalf("output error %v", err)
	}
}

// TestTypedOutputAcrossACrash: the worker dies while the run's tool call
// runs; the next worker finishes the call, gets an answer that fails the
// schema, repairs it, and the caller gets the value decoded.
func TestTypedOutputAcrossACrash(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	log := &execLog{path: filepath.Join(t.TempDir(), "exec.log")}
	queue := "typed-" + t.Name()
	a := startChild(t, s, "A", queue, log.path)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := uniqueID("typed")
	run, err := StartAs[forecast](ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, RunInput{Agent: "typed", Input: "forecast for Paris"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "worker A to start the tool call", func() bool { return log.count("tool:slow:A") == 1 })
	a.kill()
	startChild(t, s, "B", queue, log.path)
	res, err := WaitAs[forecast](ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if res.Value != (forecast{City: "Paris", Temp: 21}) || res.Usage.Requests != 3 {
		t.Fatalf("value %+v, %d requests", res.Value, res.Usage.Requests)
	}
	// The first model call ran once, on A; the call cut off ran again on
	// B; the answer and its repair ran on B.
	for prefix, want := range map[string]int{"typed:model:1:A": 1, "typed:model:": 3, "typed:model:3:B": 1, "typed:model:5:B": 1, "tool:slow:A": 1, "tool:slow:B": 1} {
		if got := log.count(prefix); got != want {
			t.Errorf("%s: %d, want %d; log %v", prefix, got, want, log.lines())
		}
	}
	record(t, c, id, "typed")
}
