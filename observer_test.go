package runlet_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func TestSlogObserver(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	model := runlettest.NewModel(
		runlettest.ToolCallReply(runlettest.Call("c1", "nope", `{}`)),
		runlettest.TextReply("done"),
	)
	rt := runlet.NewRuntime(runlet.WithObservers(runlet.NewSlogObserver(logger)))
	if _, err := rt.Run(context.Background(), &runlet.Agent{Name: "a", Model: model}, "go"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`"msg":"model.started"`, `"msg":"tool.finished"`, `"level":"WARN"`, `"error_kind":"unknown_tool"`, `"msg":"run.finished"`, `"agent":"a"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "text.delta") || strings.Contains(out, "state.changed") {
		t.Errorf("debug events logged at info level:\n%s", out)
	}
	// Failures log at error level with the policy.
	buf.Reset()
	model = runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "nope", `{}`)))
	_, err := runlet.NewRuntime(runlet.WithObservers(runlet.NewSlogObserver(logger)), runlet.WithMaxTurns(1)).Run(context.Background(), &runlet.Agent{Model: model}, "go")
	if err == nil || !strings.Contains(buf.String(), `"level":"ERROR","msg":"run.failed"`) || !strings.Contains(buf.String(), `"policy":"max_turns"`) {
		t.Fatalf("err=%v log=%s", err, buf.String())
	}
}

// vandal is an observer that changes everything it is shown.
func vandal(_ context.Context, ev runlet.Event) {
	scribble := func(msgs []runlet.Message) {
		for i := range msgs {
			for j, p := range msgs[i].Parts {
				if c, ok := p.(runlet.ToolCallPart); ok {
					copy(c.Arguments, bytes.Repeat([]byte("X"), len(c.Arguments)))
				}
				msgs[i].Parts[j] = runlet.TextPart{Text: "vandalised"}
			}
		}
	}
	switch e := ev.(type) {
	case *runlet.RunStarted:
		scribble(e.Input)
	case *runlet.ModelStarted:
		scribble(e.Request.Messages)
		e.Request.Instructions = "vandalised"
		t := 9.0
		e.Request.Temperature = &t
		e.Request.Options["seed"] = 666
		e.Request.Tools[0].Name = "vandalised"
	case *runlet.ModelFinished:
		scribble([]runlet.Message{e.Response.Message})
		e.Response.Message.Parts = nil
	case *runlet.ToolStarted:
		copy(e.Call.Arguments, bytes.Repeat([]byte("X"), len(e.Call.Arguments)))
	case *runlet.ToolFinished:
		e.Result.Content = "vandalised"
	case *runlet.TextDelta:
		e.Delta = "vandalised"
	case *runlet.RunFinished:
		e.Result.Output = "vandalised"
		scribble(e.Result.Messages)
	}
}

// Observers only watch, and that is enforced: an observer that changes
// every event changes nothing sent to the model, to a tool, or returned to
// the caller (Run's result, Stream's events).
func TestObserversCannotChangeTheRun(t *testing.T) {
	for _, stream := range []bool{false, true} {
		model := runlettest.NewModel(
			runlettest.ToolCallReply(runlettest.Call("c1", "get_weather", `{"city":"Rome"}`)),
			runlettest.TextReply("Sunny."),
		)
		var toolSaw []string
		tool := runlet.NewTool("get_weather", "", func(_ context.Context, in weatherIn) (string, error) {
			toolSaw = append(toolSaw, in.City)
			return "sunny in " + in.City, nil
		})
		temp := 0.5
		agent := &runlet.Agent{Instructions: "Be brief.", Model: model, Tools: []runlet.Tool{tool},
			Settings: runlet.Settings{Temperature: &temp}, Options: map[string]any{"seed": 1}}
		rt := runlet.NewRuntime(runlet.WithObservers(runlet.ObserverFunc(vandal)))
		var res *runlet.Result
		var text strings.Builder
		if stream {
			evs, err := collect(t, rt.Stream(context.Background(), agent, "Rome?"))
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if d, ok := ev.(*runlet.TextDelta); ok {
					text.WriteString(d.Delta)
				}
			}
			res = evs[len(evs)-1].(*runlet.RunFinished).Result
		} else {
			var err error
			if res, err = rt.Run(context.Background(), agent, "Rome?"); err != nil {
				t.Fatal(err)
			}
			text.WriteString(res.Output)
		}
		reqs := model.Requests()
		second := reqs[1]
		if res.Output != "Sunny." || text.String() != "Sunny." || len(res.Messages) != 4 || res.Messages[0].Text() != "Rome?" {
			t.Fatalf("stream=%v: result %+v, text %q", stream, res, text.String())
		}
		if len(toolSaw) != 1 || toolSaw[0] != "Rome" {
			t.Fatalf("stream=%v: tool saw %v", stream, toolSaw)
		}
		if second.Instructions != "Be brief." || *second.Temperature != 0.5 || second.Options["seed"] != 1 || second.Tools[0].Name != "get_weather" ||
			second.Messages[0].Text() != "Rome?" || string(second.Messages[1].ToolCalls()[0].Arguments) != `{"city":"Rome"}` ||
			second.Messages[2].Parts[0].(runlet.ToolResultPart).Content != "sunny in Rome" {
			t.Fatalf("stream=%v: the model was sent %+v", stream, second)
		}
	}
}
