package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// listTools is a Toolset returning lists[min(call, len-1)]: a new list on
// every model call.
type listTools struct {
	lists [][]runlet.Tool
	calls int
	err   error
}

func (l *listTools) Tools(context.Context) ([]runlet.Tool, error) {
	i := min(l.calls, len(l.lists)-1)
	l.calls++
	return l.lists[i], l.err
}

func echoTool(name string) runlet.Tool {
	return runlet.NewTool(name, "Says its name.", func(context.Context, struct{}) (string, error) {
		return name + " ran", nil
	})
}

func specNames(specs []runlet.ToolSpec) string {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}

func TestToolsetChangesBetweenModelCalls(t *testing.T) {
	ts := &listTools{lists: [][]runlet.Tool{
		{echoTool("a")},
		{echoTool("b")},
		{echoTool("b")},
	}}
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("1", "a", `{}`)),
		// a is gone by now: the model calling it gets an unknown-tool error.
		runlettest.ToolCallReply(runlettest.Call("2", "a", `{}`), runlettest.Call("3", "b", `{}`)),
		runlettest.TextReply("done"),
	)
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{echoTool("static")}, Toolsets: []runlet.Toolset{ts}}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "go")
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	for i, want := range []string{"static,a", "static,b", "static,b"} {
		if got := specNames(reqs[i].Tools); got != want {
			t.Errorf("model call %d saw tools %s, want %s", i+1, got, want)
		}
	}
	if ts.calls != 3 {
		t.Errorf("toolset asked %d times, want once per model call (3)", ts.calls)
	}
	var results []runlet.ToolResultPart
	for _, m := range res.Messages {
		for _, p := range m.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				results = append(results, r)
			}
		}
	}
	if len(results) != 3 || results[0].Content != "a ran" || !results[1].IsError ||
		!strings.Contains(results[1].Content, `unknown tool "a"`) || results[2].Content != "b ran" {
		t.Fatalf("results: %+v", results)
	}
}

func TestToolsetErrorsFailTheRun(t *testing.T) {
	boom := errors.New("server unreachable")
	for name, agent := range map[string]*runlet.Agent{
		"error":   {Toolsets: []runlet.Toolset{&listTools{lists: [][]runlet.Tool{nil}, err: boom}}},
		"nil set": {Toolsets: []runlet.Toolset{nil}},
	} {
		t.Run(name, func(t *testing.T) {
			agent.Model = runlettest.NewModel(runlettest.TextReply("never"))
			res, err := runlet.NewRuntime().Run(context.Background(), agent, "go")
			if err == nil || res == nil || res.Status != runlet.StateFailed {
				t.Fatalf("res %+v, err %v: want a failed run", res, err)
			}
			if name == "error" && !errors.Is(err, boom) {
				t.Errorf("err %v does not wrap the toolset's error", err)
			}
		})
	}
}

// Many tools (past the count from which the run finds them by name in an
// index): each is found, the unknown one lists them all, a duplicate fails.
func TestManyTools(t *testing.T) {
	var tools []runlet.Tool
	var names []string
	for i := range 40 {
		name := fmt.Sprintf("t%02d", i)
		tools = append(tools, echoTool(name))
		names = append(names, name)
	}
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("1", "t00", `{}`), runlettest.Call("2", "t39", `{}`), runlettest.Call("3", "t17", `{}`), runlettest.Call("4", "nope", `{}`)),
		runlettest.TextReply("done"),
	)
	static := &runlet.Agent{Model: model, Tools: tools}
	res, err := runlet.NewRuntime().Run(context.Background(), static, "go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Messages[2].Parts {
		got = append(got, p.(runlet.ToolResultPart).Content)
	}
	want := []string{"t00 ran", "t39 ran", "t17 ran", `Error: unknown tool "nope". Available tools: ` + strings.Join(names, ", ") + "."}
	if !slices.Equal(got, want) {
		t.Fatalf("results %q, want %q", got, want)
	}
	if specs := specNames(model.Requests()[0].Tools); specs != strings.Join(names, ",") {
		t.Fatalf("tools shown %s", specs)
	}
	// The same tools from a toolset, where the run keeps its own list.
	model = runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("1", "t33", `{}`)), runlettest.TextReply("done"))
	res, err = runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model, Toolsets: []runlet.Toolset{&listTools{lists: [][]runlet.Tool{tools}}}}, "go")
	if err != nil || res.Messages[2].Parts[0].(runlet.ToolResultPart).Content != "t33 ran" {
		t.Fatal(err, res.Messages)
	}
	for _, dup := range []int{3, 30} { // found by scanning, and in the index
		model = runlettest.NewModel(runlettest.TextReply("never"))
		withDup := append(slices.Clone(tools), echoTool(fmt.Sprintf("t%02d", dup)))
		if _, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Model: model, Tools: withDup}, "go"); err == nil || !strings.Contains(err.Error(), "duplicate") {
			t.Fatalf("duplicate t%02d: %v", dup, err)
		}
	}
}

// sayTool is a tool named name whose call returns out.
type sayTool struct{ name, out string }

func (t sayTool) Spec() runlet.ToolSpec {
	return runlet.ToolSpec{Name: t.name, Description: "Says something.", InputSchema: &jsonschema.Schema{Type: "object"}}
}

func (t sayTool) Call(context.Context, json.RawMessage) (string, error) { return t.out, nil }

// A toolset's tool whose name is empty or taken (by the agent's own tool,
// a handoff, an earlier toolset's tool or an earlier tool of the same
// list) is left out, and the run goes on: a server cannot replace a local
// tool, nor fail every run by naming a tool like one.
func TestToolsetNameTaken(t *testing.T) {
	billing := &runlet.Agent{Name: "billing", Model: runlettest.NewModel(runlettest.TextReply("never"))}
	first := &listTools{lists: [][]runlet.Tool{{
		sayTool{"search", "first's search"}, sayTool{"x", "first's x"}, sayTool{"x", "first's other x"}, sayTool{"", "nameless"},
	}}}
	second := &listTools{lists: [][]runlet.Tool{{
		sayTool{"search", "second's search"}, sayTool{"transfer_to_billing", "second's transfer"},
		sayTool{"local", "second's local"}, sayTool{"y", "second's y"},
	}}}
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("1", "local", `{}`), runlettest.Call("2", "search", `{}`), runlettest.Call("3", "x", `{}`)),
		runlettest.TextReply("done"),
	)
	agent := &runlet.Agent{Model: model, Tools: []runlet.Tool{sayTool{"local", "mine"}},
		Handoffs: []runlet.Handoff{{Agent: billing}}, Toolsets: []runlet.Toolset{first, second}}
	res, err := runlet.NewRuntime().Run(context.Background(), agent, "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := specNames(model.Requests()[0].Tools); got != "local,search,x,y,transfer_to_billing" {
		t.Errorf("tools = %s", got)
	}
	var out []string
	for _, m := range res.Messages {
		for _, p := range m.Parts {
			if r, ok := p.(runlet.ToolResultPart); ok {
				out = append(out, r.Content)
			}
		}
	}
	if got := strings.Join(out, "|"); got != "mine|first's search|first's x" {
		t.Errorf("results = %s", got)
	}
}
