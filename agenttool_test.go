package runlet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// researcherAgent asks for the weather of the city it is given, then
// answers with it: deterministic whatever the order of concurrent calls.
func researcherAgent() *runlet.Agent {
	m := &runlettest.Model{Func: func(_ context.Context, req *runlet.ModelRequest) runlettest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == runlet.RoleUser {
			city := last.Text()
			return runlettest.ToolCallReply(runlettest.Call("w_"+city, "get_weather", `{"city":"`+city+`"}`))
		}
		return runlettest.TextReply("report: " + last.Parts[0].(runlet.ToolResultPart).Content)
	}}
	return &runlet.Agent{Name: "researcher", Description: "Finds facts.", Model: m, Tools: []runlet.Tool{weatherTool()}}
}

func writerAgent(tools ...runlet.Tool) (*runlet.Agent, *runlettest.Model) {
	m := runlettest.NewModel(
		runlettest.ToolCallReply(
			runlettest.Call("c1", "researcher", `{"input":"Rome"}`),
			runlettest.Call("c2", "researcher", `{"input":"Oslo"}`)),
		runlettest.TextReply("Rome and Oslo are sunny."),
	)
	return &runlet.Agent{Name: "writer", Model: m, Tools: tools}, m
}

// recorder is an observer keeping every event.
type recorder struct {
	mu  sync.Mutex
	evs []runlet.Event
}

func (r *recorder) Observe(_ context.Context, ev runlet.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

// runBoth runs agent by Run or by Stream and returns the events the
// observers saw (and, streaming, checks the consumer saw the same).
func runBoth(t *testing.T, streaming bool, rt *runlet.Runtime, agent *runlet.Agent, input string, opts ...runlet.RunOption) (*runlet.Result, []runlet.Event, error) {
	t.Helper()
	rec := &recorder{}
	opts = append(opts, runlet.WithObservers(rec))
	if !streaming {
		res, err := rt.Run(context.Background(), agent, input, opts...)
		return res, rec.evs, err
	}
	evs, err := collect(t, rt.Stream(context.Background(), agent, input, opts...))
	if len(evs) != len(rec.evs) {
		t.Fatalf("stream gave %d events, observers %d", len(evs), len(rec.evs))
	}
	var res *runlet.Result
	switch e := evs[len(evs)-1].(type) {
	case *runlet.RunFinished:
		res = e.Result
	case *runlet.RunFailed:
		res = e.Result
	case *runlet.RunInterrupted:
		res = e.Result
	}
	return res, evs, err
}

func TestAgentToolEventTreeAndUsage(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			researcher := researcherAgent()
			writer, wm := writerAgent(researcher.AsTool())
			res, evs, err := runBoth(t, streaming, runlet.NewRuntime(), writer, "weather report")
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != "Rome and Oslo are sunny." || res.Agent != "writer" {
				t.Fatalf("result = %q by %q", res.Output, res.Agent)
			}
			// The writer's model saw each researcher's answer as the tool's result.
			got := map[string]string{}
			for _, p := range wm.Requests()[1].Messages[2].Parts {
				tr := p.(runlet.ToolResultPart)
				got[tr.CallID] = tr.Content
			}
			if got["c1"] != "report: sunny in Rome" || got["c2"] != "report: sunny in Oslo" {
				t.Fatalf("tool results = %v", got)
			}
			// Usage: 2 writer calls, 2 per researcher call, 15 tokens each.
			if res.Usage.Requests != 6 || res.Usage.TotalTokens != 90 {
				t.Fatalf("usage = %+v", res.Usage)
			}
			if w, r := res.UsageByAgent["writer"], res.UsageByAgent["researcher"]; w.Requests != 2 || r.Requests != 4 || r.TotalTokens != 60 {
				t.Fatalf("usage by agent = %+v", res.UsageByAgent)
			}
			checkTree(t, evs, res.RunID)
		})
	}
}

// checkTree checks the events form a tree: one sequence, one terminal
// event, and each nested event inside the tool call its CallPath names.
func checkTree(t *testing.T, evs []runlet.Event, runID string) {
	t.Helper()
	open := map[string]bool{} // tool calls started and not finished, by path
	started := map[string]bool{}
	finished := map[string]bool{}
	for i, ev := range evs {
		h := ev.Header()
		if h.RunID != runID || h.Seq != int64(i+1) {
			t.Fatalf("event %d (%s): run %q seq %d", i, ev.Header().Type, h.RunID, h.Seq)
		}
		switch e := ev.(type) {
		case *runlet.RunFinished, *runlet.RunFailed, *runlet.RunInterrupted:
			if i != len(evs)-1 || h.Depth != 0 {
				t.Fatalf("terminal event %s at %d of %d, depth %d", ev.Header().Type, i, len(evs), h.Depth)
			}
		case *runlet.ToolStarted:
			open[join(h.CallPath, e.Call.ID)] = true
		case *runlet.ToolFinished:
			delete(open, join(h.CallPath, e.Call.ID))
		case *runlet.AgentStarted:
			started[h.CallPath] = true
		case *runlet.AgentFinished:
			finished[h.CallPath] = true
		}
		if h.Depth > 0 {
			if h.Agent != "researcher" || strings.Count(h.CallPath, "/")+1 != h.Depth || !open[h.CallPath] {
				t.Fatalf("event %d (%s) depth %d path %q agent %q outside its call", i, ev.Header().Type, h.Depth, h.CallPath, h.Agent)
			}
		} else if h.Agent != "writer" || h.CallPath != "" {
			t.Fatalf("event %d (%s) at depth 0: agent %q path %q", i, ev.Header().Type, h.Agent, h.CallPath)
		}
	}
	if len(started) != 2 || len(finished) != 2 || !started["c1"] || !finished["c2"] {
		t.Fatalf("agents started %v finished %v", started, finished)
	}
}

func join(path, id string) string {
	if path == "" {
		return id
	}
	return path + "/" + id
}

func TestAgentToolSharesLimits(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			writer, wm := writerAgent(researcherAgent().AsTool())
			// 15 tokens a call: the writer's first and the researchers' four
			// make 75, past 60, while the researchers run.
			res, evs, err := runBoth(t, streaming, runlet.NewRuntime(), writer, "weather report",
				runlet.WithLimits(runlet.UsageLimits{TotalTokens: 60}))
			var pe *runlet.PolicyError
			if !errors.Is(err, runlet.ErrUsageLimit) || !errors.As(err, &pe) || pe.Policy != "usage_limit:total_tokens" {
				t.Fatalf("err = %v", err)
			}
			if n := len(wm.Requests()); n != 1 {
				t.Fatalf("the writer made %d model calls after the budget was spent", n-1)
			}
			if res.Usage.TotalTokens <= 60 || res.UsageByAgent["researcher"].Requests == 0 {
				t.Fatalf("usage = %+v by agent %+v", res.Usage, res.UsageByAgent)
			}
			if _, ok := evs[len(evs)-1].(*runlet.RunFailed); !ok {
				t.Fatalf("last event %s", evs[len(evs)-1].Header().Type)
			}
		})
	}
}

func TestAgentToolFailureIsToolError(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			// One researcher runs out of turns, the other out of model.
			looping := researcherAgent()
			looping.MaxTurns = 1
			broken := &runlet.Agent{Name: "broken", Model: runlettest.NewModel(runlettest.ErrorReply(errors.New("model down")))}
			m := runlettest.NewModel(
				runlettest.ToolCallReply(
					runlettest.Call("c1", "researcher", `{"input":"Rome"}`),
					runlettest.Call("c2", "broken", `{"input":"Oslo"}`),
					runlettest.Call("c3", "broken", `{"wrong":1}`)),
				runlettest.TextReply("Nobody knows."),
			)
			writer := &runlet.Agent{Name: "writer", Model: m, Tools: []runlet.Tool{looping.AsTool(), broken.AsTool()}}
			res, evs, err := runBoth(t, streaming, runlet.NewRuntime(), writer, "weather")
			if err != nil || res.Output != "Nobody knows." {
				t.Fatalf("res %+v err %v", res, err)
			}
			results := map[string]runlet.ToolResultPart{}
			for _, p := range m.Requests()[1].Messages[2].Parts {
				tr := p.(runlet.ToolResultPart)
				results[tr.CallID] = tr
			}
			for id, want := range map[string]string{"c1": "max turns", "c2": "model down", "c3": "invalid arguments"} {
				if !results[id].IsError || !strings.Contains(results[id].Content, want) {
					t.Errorf("%s: %+v, want an error with %q", id, results[id], want)
				}
			}
			var failed []string
			for _, ev := range evs {
				if e, ok := ev.(*runlet.AgentFinished); ok && e.Status == runlet.StateFailed {
					failed = append(failed, e.Policy)
				}
			}
			if len(failed) != 2 || !(failed[0] == "max_turns" || failed[1] == "max_turns") {
				t.Fatalf("failed agents' policies: %q", failed)
			}
		})
	}
}

func TestAgentToolCancel(t *testing.T) {
	slow := &runlet.Agent{Name: "slow", Model: runlettest.NewModel(runlettest.Reply{Delay: time.Hour})}
	parent := func() *runlet.Agent {
		return &runlet.Agent{Name: "writer", Model: runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("c1", "slow", `{"input":"x"}`)),
		), Tools: []runlet.Tool{slow.AsTool()}}
	}
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
			if _, ok := ev.(*runlet.AgentStarted); ok {
				cancel()
			}
		})
		res, err := runlet.NewRuntime().Run(ctx, parent(), "go", runlet.WithObservers(obs))
		if !errors.Is(err, context.Canceled) || res.Status != runlet.StateFailed {
			t.Fatalf("err = %v, status %s", err, res.Status)
		}
	})
	t.Run("stream consumer stops", func(t *testing.T) {
		n := 0
		for ev, err := range runlet.NewRuntime().Stream(context.Background(), parent(), "go") {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if _, ok := ev.(*runlet.AgentStarted); ok {
				break
			}
		}
		if n == 0 {
			t.Fatal("no events")
		}
	})
}

func TestAgentToolNestedApprovalResumesInAnotherRuntime(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			store := runlet.NewMemoryStore()
			var deleted []string
			var mu sync.Mutex
			ops := approvalAgent(runlettest.NewModel(script()...), &deleted, &mu)
			boss := &runlet.Agent{Name: "boss", Model: runlettest.NewModel(
				runlettest.ToolCallReply(runlettest.Call("c1", "ops", `{"input":"clean up"}`)),
				runlettest.TextReply("All clean."),
			), Tools: []runlet.Tool{ops.AsTool()}}

			res, evs, err := runBoth(t, streaming, runlet.NewRuntime(runlet.WithStore(store)), boss, "tidy", runlet.WithSession("s"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != runlet.StateInterrupted || len(res.Pending) != 2 || res.Pending[0].ID != "d1" || res.Pending[1].ID != "d2" {
				t.Fatalf("result %+v", res)
			}
			if last, ok := evs[len(evs)-1].(*runlet.RunInterrupted); !ok || last.Depth != 0 || len(last.Pending) != 2 {
				t.Fatalf("last event %+v", evs[len(evs)-1])
			}
			if len(deleted) != 0 {
				t.Fatal("a call needing approval ran")
			}
			// A wrong decision set leaves the checkpoint in place.
			rt2 := runlet.NewRuntime(runlet.WithStore(store))
			if _, err := rt2.Resume(context.Background(), boss, res.RunID, runlet.Approve("d1")); err == nil || !strings.Contains(err.Error(), `"d2"`) {
				t.Fatalf("resume with a missing decision: %v", err)
			}

			rec := &recorder{}
			rt2 = runlet.NewRuntime(runlet.WithStore(store), runlet.WithObservers(rec))
			var res2 *runlet.Result
			if streaming {
				evs2, err := collect(t, rt2.ResumeStream(context.Background(), boss, res.RunID, runlet.Approve("d1"), runlet.Reject("d2", "keep it")))
				if err != nil {
					t.Fatal(err)
				}
				res2 = evs2[len(evs2)-1].(*runlet.RunFinished).Result
			} else if res2, err = rt2.Resume(context.Background(), boss, res.RunID, runlet.Approve("d1"), runlet.Reject("d2", "keep it")); err != nil {
				t.Fatal(err)
			}
			if res2.Output != "All clean." || len(deleted) != 1 || deleted[0] != "/tmp/a" {
				t.Fatalf("output %q, deleted %v", res2.Output, deleted)
			}
			// Counts go on across the interruption: boss 2 calls, ops 2.
			if res2.Usage.Requests != 4 || res2.UsageByAgent["ops"].Requests != 2 || res2.UsageByAgent["boss"].Requests != 2 {
				t.Fatalf("usage %+v by agent %+v", res2.Usage, res2.UsageByAgent)
			}
			// The ops agent resumed at depth 1, saw the rejection, and answered.
			var resumed, rejected bool
			for _, ev := range rec.evs {
				switch e := ev.(type) {
				case *runlet.AgentStarted:
					resumed = e.Resumed && e.Depth == 1 && e.CallPath == "c1"
				case *runlet.ToolFinished:
					if e.Call.ID == "d2" && e.Depth == 1 && e.ErrorKind == runlet.ToolDenied {
						rejected = true
					}
				}
			}
			if !resumed || !rejected {
				t.Fatalf("resumed %v rejected %v", resumed, rejected)
			}
			// The whole conversation of the boss is in its session.
			hist, _ := store.LoadSession(context.Background(), "s")
			if len(hist) != 4 || hist[3].Text() != "All clean." {
				t.Fatalf("session holds %d messages", len(hist))
			}
			if _, err := rt2.Resume(context.Background(), boss, res.RunID, runlet.Approve("d1"), runlet.Approve("d2")); !errors.Is(err, runlet.ErrNotFound) {
				t.Fatalf("second resume: %v", err)
			}
		})
	}
}

type cityIn struct {
	City string `json:"city" jsonschema:"the city"`
}

func TestAgentToolInputAndHistory(t *testing.T) {
	researcher := researcherAgent()
	named := *researcher
	named.Name, named.Description = "ask_researcher", "Weather of a city."
	tool := named.AsTool(runlet.WithInputSchema(runlet.SchemaFor[cityIn]()), runlet.WithCallerHistory())
	spec := tool.Spec()
	if spec.Name != "ask_researcher" || spec.Description != "Weather of a city." || spec.InputSchema.Properties["city"] == nil {
		t.Fatalf("spec %+v", spec)
	}
	writer := &runlet.Agent{Name: "writer", Model: runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c0", "ask_researcher", `{"town":"Rome"}`)),
		runlettest.ToolCallReply(runlettest.Call("c1", "ask_researcher", `{"city":"Rome"}`)),
		runlettest.TextReply("ok"),
	), Tools: []runlet.Tool{tool}}
	res, err := runlet.NewRuntime().Run(context.Background(), writer, "weather", runlet.WithHistory(runlet.UserText("hi"), runlet.AssistantText("hello")))
	if err != nil {
		t.Fatal(err)
	}
	// Arguments outside the schema never reach the agent (the caller sees
	// the is-error result, and so does the agent, in its history).
	if r := res.Messages[2].Parts[0].(runlet.ToolResultPart); !r.IsError {
		t.Fatalf("invalid arguments answered %+v", r)
	}
	if res.UsageByAgent["ask_researcher"].Requests == 0 {
		t.Fatalf("usage by agent %v", res.UsageByAgent)
	}
	req := researcher.Model.(*runlettest.Model).Requests()[0]
	var texts []string
	for _, m := range req.Messages {
		texts = append(texts, string(m.Role)+":"+m.Text())
	}
	if got := strings.Join(texts, "|"); got != `user:hi|assistant:hello|user:weather|assistant:|tool:|user:{"city":"Rome"}` {
		t.Fatalf("researcher saw %s", got)
	}
	// Defaults: the agent's name and description.
	if s := researcherAgent().AsTool().Spec(); s.Name != "researcher" || s.Description != "Finds facts." {
		t.Fatalf("default spec %+v", s)
	}
	if s := (&runlet.Agent{Name: "Billing Team"}).AsTool().Spec(); s.Name != "Billing_Team" {
		t.Fatalf("name %q", s.Name)
	}
}

func TestAgentToolOptions(t *testing.T) {
	tool := researcherAgent().AsTool(runlet.WithToolTimeout(time.Second), runlet.WithMaxToolOutput(10), runlet.WithApproval())
	p := runlet.PolicyOf(tool)
	if p != (runlet.ToolPolicy{Timeout: time.Second, MaxOutput: 10, RequiresApproval: true}) {
		t.Fatalf("policy %+v", p)
	}
	type city string
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AsTool took a schema that is not an object")
			}
		}()
		researcherAgent().AsTool(runlet.WithInputSchema(runlet.SchemaFor[city]()))
	}()
	_, err := runlet.NewToolE("f", "", func(context.Context, struct{}) (string, error) { return "", nil }, runlet.WithCallerHistory())
	if err == nil || !strings.Contains(err.Error(), "WithCallerHistory") {
		t.Fatalf("NewToolE with WithCallerHistory: %v", err)
	}
}

func TestAgentToolOutsideARun(t *testing.T) {
	out, err := researcherAgent().AsTool().Call(context.Background(), []byte(`{"input":"Rome"}`))
	if err != nil || out != "report: sunny in Rome" {
		t.Fatalf("%q %v", out, err)
	}
}

// An agent's tool name is made as every tool name of the module is: one
// '_' per character outside [a-zA-Z0-9_-], and a hash past 64 bytes (its
// name used to be cut per byte, so "Müller" became "M__ller" here and
// "M_ller" as an MCP tool).
func TestAgentToolName(t *testing.T) {
	for name, want := range map[string]string{
		"Müller":                 "M_ller",
		"research team":          "research_team",
		strings.Repeat("x", 100): strings.Repeat("x", 55) + "_a47cb06f",
	} {
		a := &runlet.Agent{Name: name, Model: runlettest.NewModel(runlettest.TextReply("ok"))}
		if got := a.AsTool().Spec().Name; got != want {
			t.Errorf("%q as a tool: %q, want %q", name, got, want)
		}
	}
}
