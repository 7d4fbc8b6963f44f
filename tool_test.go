package runlet_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Tools a provider would reject are refused when they are made, not when
// the live API answers 400.
func TestNewToolRefusesWhatProvidersReject(t *testing.T) {
	type in struct {
		Q string `json:"q"`
	}
	fn := func(context.Context, in) (string, error) { return "", nil }
	for _, name := range []string{"", "get weather", "get.weather", "wetter_größe", strings.Repeat("a", 65), "a/b"} {
		if _, err := runlet.NewToolE(name, "", fn); err == nil || !strings.Contains(err.Error(), "64") {
			t.Errorf("name %q: err = %v", name, err)
		}
	}
	for _, name := range []string{"a", "get_weather", "get-weather-2", strings.Repeat("Z", 64)} {
		if _, err := runlet.NewToolE(name, "", fn); err != nil {
			t.Errorf("name %q: %v", name, err)
		}
	}
	str := func(context.Context, string) (string, error) { return "", nil }
	if _, err := runlet.NewToolE("echo", "", str); err == nil || !strings.Contains(err.Error(), "object") {
		t.Errorf("string input: err = %v", err)
	}
	list := func(context.Context, []int) (string, error) { return "", nil }
	if _, err := runlet.NewToolE("sum", "", list); err == nil {
		t.Error("array input accepted")
	}
	if _, err := runlet.NewToolE("q", "", fn, runlet.WithInputSchema(&jsonschema.Schema{Type: "string"})); err == nil {
		t.Error("a string WithInputSchema accepted")
	}
	if _, err := runlet.NewToolE("q", "", fn, runlet.WithInputSchema(nil)); err == nil {
		t.Error("a nil WithInputSchema accepted")
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(error).Error(), "get weather") {
			t.Errorf("NewTool with a bad name: panic %v", v)
		}
	}()
	runlet.NewTool("get weather", "", fn)
}

// A *ToolError's message and a panic value go through the same output cap
// as a returned string: in the result, the events and the logs.
func TestToolOutputCapHoldsForErrorsAndPanics(t *testing.T) {
	huge := strings.Repeat("x", 100_000)
	loud := runlet.NewTool("loud_error", "", func(context.Context, struct{}) (string, error) {
		return "", &runlet.ToolError{Kind: runlet.ToolFailed, Err: errors.New(huge)}
	})
	crash := runlet.NewTool("loud_panic", "", func(context.Context, struct{}) (string, error) {
		panic(huge)
	})
	for _, tool := range []string{"loud_error", "loud_panic"} {
		t.Run(tool, func(t *testing.T) {
			model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c", tool, `{}`)), runlettest.TextReply("ok"))
			var logs strings.Builder
			var finished *runlet.ToolFinished
			obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
				if f, ok := ev.(*runlet.ToolFinished); ok {
					finished = f
				}
			})
			rt := runlet.NewRuntime(runlet.WithMaxToolOutput(100), runlet.WithObservers(obs), runlet.WithLogger(textLogger(&logs)))
			res, err := rt.Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{loud, crash}}, "go")
			if err != nil {
				t.Fatal(err)
			}
			got := res.Messages[2].Parts[0].(runlet.ToolResultPart)
			if !got.IsError || len(got.Content) > 200 || !strings.Contains(got.Content, "[output truncated") {
				t.Fatalf("result: %d bytes %q", len(got.Content), got.Content[:min(len(got.Content), 300)])
			}
			if finished.Result.Content != got.Content || model.Requests()[1].Messages[2].Parts[0].(runlet.ToolResultPart).Content != got.Content {
				t.Fatal("event or model saw another content")
			}
			if strings.Contains(logs.String(), strings.Repeat("x", 1000)) {
				t.Fatalf("logs hold the whole value (%d bytes)", logs.Len())
			}
		})
	}
}

func TestSchemaFor(t *testing.T) {
	type in struct {
		City string `json:"city" jsonschema:"the city"`
		Days int    `json:"days,omitempty"`
	}
	s := runlet.SchemaFor[in]()
	if s.Type != "object" || s.Properties["city"].Description != "the city" || len(s.Required) != 1 || s.Required[0] != "city" {
		t.Fatalf("schema %+v", s)
	}
	tool, err := runlet.NewToolE("weather", "", func(context.Context, map[string]any) (string, error) { return "", nil },
		runlet.WithInputSchema(runlet.SchemaFor[in]()))
	if err != nil || tool.Spec().InputSchema.Properties["days"] == nil {
		t.Fatalf("tool %v, err %v", tool, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("SchemaFor[chan int] did not panic")
		}
	}()
	runlet.SchemaFor[chan int]()
}

// plainTool implements Tool only.
type plainTool struct{}

func (plainTool) Spec() runlet.ToolSpec { return runlet.ToolSpec{Name: "plain"} }
func (plainTool) Call(context.Context, json.RawMessage) (string, error) {
	return "", nil
}

func TestPolicyOf(t *testing.T) {
	if p := runlet.PolicyOf(plainTool{}); p != (runlet.ToolPolicy{}) {
		t.Errorf("a Tool without a policy: %+v, want the zero policy", p)
	}
	tool := runlet.NewTool("t", "", func(context.Context, struct{}) (string, error) { return "", nil },
		runlet.WithToolTimeout(time.Second), runlet.WithApproval())
	if _, ok := tool.(runlet.PolicyTool); !ok {
		t.Fatal("NewTool's tool is not a PolicyTool")
	}
	if p := runlet.PolicyOf(tool); p != (runlet.ToolPolicy{Timeout: time.Second, RequiresApproval: true}) {
		t.Errorf("policy %+v", p)
	}
}
