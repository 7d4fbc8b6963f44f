package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// recorder is an observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []runlet.Event
}

func (r *recorder) Observe(_ context.Context, ev runlet.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) all() []runlet.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]runlet.Event(nil), r.events...)
}

// counter counts a tool's executions by argument.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

func (c *counter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

type cityArgs struct {
	City string `json:"city"`
}

// weatherTool answers for a city and counts its executions.
func weatherTool(c *counter, opts ...runlet.ToolOption) runlet.Tool {
	return runlet.NewTool("get_weather", "Weather in a city.", func(ctx context.Context, in cityArgs) (string, error) {
		c.add(in.City)
		switch in.City {
		case "Nowhere":
			return "", errors.New("no such city")
		case "Crash":
			panic("boom")
		}
		return "sunny in " + in.City, nil
	}, opts...)
}

// env returns a test workflow environment with d registered.
func env(t *testing.T, d *Durable) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger())
	e := s.NewTestWorkflowEnvironment()
	d.Register(e)
	return e
}

func mustNew(t *testing.T, cfg Config) *Durable {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// failure returns the workflow's ApplicationError and its details.
func failure(t *testing.T, err error) (*temporal.ApplicationError, failureDetails) {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("workflow error = %v, want an ApplicationError", err)
	}
	var fd failureDetails
	if err := app.Details(&fd); err != nil {
		t.Fatalf("details: %v", err)
	}
	return app, fd
}

func toolResults(m runlet.Message) []runlet.ToolResultPart {
	var out []runlet.ToolResultPart
	for _, p := range m.Parts {
		if r, ok := p.(runlet.ToolResultPart); ok {
			out = append(out, r)
		}
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
