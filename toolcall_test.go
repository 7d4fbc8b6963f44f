package runlet_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// CallTool is the run's executor: for every outcome it gives the result and
// kind a run gives its model for the same call.
func TestCallToolIsTheRunsExecutor(t *testing.T) {
	release := make(chan struct{})
	stubbornDone := make(chan struct{}, 2)
	tools := []runlet.Tool{
		weatherTool(),
		runlet.NewTool("boom", "panics", func(context.Context, struct{}) (string, error) { panic("kaboom") }),
		runlet.NewTool("fail", "fails", func(context.Context, struct{}) (string, error) { return "", errors.New("disk full") }),
		runlet.NewTool("slow", "waits", func(ctx context.Context, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, runlet.WithToolTimeout(20*time.Millisecond)),
		// stubborn ignores its context: abandoned after the grace period,
		// it returns when the test ends.
		runlet.NewTool("stubborn", "ignores its context", func(context.Context, struct{}) (string, error) {
			defer func() { stubbornDone <- struct{}{} }()
			<-release
			return "late", nil
		}, runlet.WithToolTimeout(20*time.Millisecond)),
		runlet.NewTool("big", "huge output", func(context.Context, struct{}) (string, error) {
			return strings.Repeat("é", 100), nil
		}),
		runlet.NewTool("bigpanic", "panics with a huge value", func(context.Context, struct{}) (string, error) {
			panic(strings.Repeat("x", 1000))
		}),
		runlet.NewTool("own", "its own cap", func(context.Context, struct{}) (string, error) {
			return strings.Repeat("y", 100), nil
		}, runlet.WithMaxToolOutput(10)),
	}
	byName := map[string]runlet.Tool{}
	for _, tl := range tools {
		byName[tl.Spec().Name] = tl
	}
	cases := []struct {
		tool, args string
		kind       runlet.ToolErrorKind
		contains   string
	}{
		{"get_weather", `{"city":"Oslo"}`, "", "sunny in Oslo"},
		{"get_weather", `{"city":`, runlet.ToolInvalidJSON, "not valid JSON"},
		{"get_weather", `{"city":42}`, runlet.ToolInvalidArgs, "Error: invalid arguments for get_weather"},
		{"get_weather", ``, runlet.ToolInvalidArgs, "city"},
		{"fail", `{}`, runlet.ToolFailed, "Error: disk full"},
		{"boom", `{}`, runlet.ToolPanicked, "Error: the tool crashed (panic: kaboom)."},
		{"slow", `{}`, runlet.ToolTimedOut, "Error: the tool timed out after 20ms."},
		{"stubborn", `{}`, runlet.ToolTimedOut, "Error: the tool timed out after 20ms."},
		{"big", `{}`, "", "[output truncated: showing 64 of 200 bytes]"},
		{"bigpanic", `{}`, runlet.ToolPanicked, "[output truncated: showing 64 of"},
		{"own", `{}`, "", "[output truncated: showing 10 of 100 bytes]"},
	}
	rt := runlet.NewRuntime(runlet.WithMaxToolOutput(64), runlet.WithLogger(discardLogger()))
	for _, tc := range cases {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			got, kind := rt.CallTool(t.Context(), byName[tc.tool], runlet.ToolCallPart{ID: "c1", Name: "ignored", Arguments: []byte(tc.args)})
			if kind != tc.kind || got.IsError != (kind != "") || !strings.Contains(got.Content, tc.contains) ||
				got.CallID != "c1" || got.Name != tc.tool {
				t.Fatalf("CallTool = %+v, %q; want kind %q and %q", got, kind, tc.kind, tc.contains)
			}
			model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", tc.tool, tc.args)), runlettest.TextReply("ok"))
			res, err := rt.Run(t.Context(), &runlet.Agent{Model: model, Tools: tools}, "go")
			if err != nil {
				t.Fatal(err)
			}
			if inRun := res.Messages[2].Parts[0].(runlet.ToolResultPart); !reflect.DeepEqual(inRun, got) {
				t.Errorf("a run gave %+v,\nCallTool %+v", inRun, got)
			}
		})
	}
	close(release)
	<-stubbornDone
	<-stubbornDone
}

func TestCallToolOutsideARun(t *testing.T) {
	rt := runlet.NewRuntime(runlet.WithToolTimeout(20 * time.Millisecond))
	waits := runlet.NewTool("waits", "waits", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	// The Runtime's timeout bounds a tool without its own.
	if got, kind := rt.CallTool(t.Context(), waits, runlet.ToolCallPart{}); kind != runlet.ToolTimedOut || got.Content != "Error: the tool timed out after 20ms." {
		t.Errorf("Runtime's timeout: %+v, %q", got, kind)
	}
	// A cancelled context: ToolCanceled.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got, kind := runlet.NewRuntime().CallTool(ctx, waits, runlet.ToolCallPart{}); kind != runlet.ToolCanceled || !got.IsError {
		t.Errorf("cancelled: %+v, %q", got, kind)
	}
	// Nobody can approve a call outside a run.
	var ran bool
	gated := runlet.NewTool("gated", "needs approval", func(context.Context, struct{}) (string, error) { ran = true; return "done", nil }, runlet.WithApproval())
	if got, kind := rt.CallTool(t.Context(), gated, runlet.ToolCallPart{}); kind != runlet.ToolDenied || ran || !strings.Contains(got.Content, "approval") {
		t.Errorf("gated: %+v, %q (ran %v)", got, kind, ran)
	}
	if got, kind := rt.CallTool(t.Context(), nil, runlet.ToolCallPart{}); kind != runlet.ToolUnknown || !got.IsError {
		t.Errorf("nil tool: %+v, %q", got, kind)
	}
	// An agent's tool runs its agent on the Runtime of the call, whose
	// observers see it.
	var started int
	obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
		if _, ok := ev.(*runlet.RunStarted); ok {
			started++
		}
	})
	inner := &runlet.Agent{Name: "inner", Model: runlettest.NewModel(runlettest.TextReply("42"))}
	got, kind := runlet.NewRuntime(runlet.WithObservers(obs)).CallTool(t.Context(), inner.AsTool(), runlet.ToolCallPart{Arguments: []byte(`{"input":"answer?"}`)})
	if kind != "" || got.Content != "42" || started != 1 {
		t.Errorf("agent tool: %+v, %q, %d runs seen", got, kind, started)
	}
	if got, kind := rt.CallTool(t.Context(), inner.AsTool(), runlet.ToolCallPart{Arguments: []byte(`{"in":1}`)}); kind != runlet.ToolInvalidArgs {
		t.Errorf("agent tool, bad arguments: %+v, %q", got, kind)
	}
}
