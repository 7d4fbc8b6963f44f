package modeltest

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/runlettest"
)

// recorder is a testing.TB that records failures instead of failing, so
// the suite's own tests can check that a broken model fails it.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// failures runs check with a recorder and returns what it reported.
func failures(t *testing.T, check func(testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return strings.Join(r.failures, "\n")
}

// streamModel is a model whose Generate drains its own stream.
func streamModel(f func(ctx context.Context, yield func(runlet.StreamEvent, error) bool)) runlet.Model {
	return modelkit.StreamFunc(func(ctx context.Context, _ *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
		return func(yield func(runlet.StreamEvent, error) bool) { f(ctx, yield) }
	})
}

// polite yields the scripted response, stopping when ctx is done.
func polite(ctx context.Context, yield func(runlet.StreamEvent, error) bool) bool {
	for ev := range modelkit.StreamResponse(scriptedResponse()) {
		if ctx.Err() != nil {
			yield(runlet.StreamEvent{}, ctx.Err())
			return false
		}
		if !yield(ev, nil) {
			return false
		}
	}
	return true
}

// TestScriptedChecksFailBrokenModels: each in-process check fails a model
// broken the way it guards against, and passes a correct one.
func TestScriptedChecksFailBrokenModels(t *testing.T) {
	checks := map[string]func(testing.TB, runlet.Model){
		"Terminal": scriptedTerminal, "Break": scriptedBreak, "Cancel": scriptedCancel, "Agree": scriptedAgree,
	}
	tests := []struct {
		name, check, want string
		model             runlet.Model
	}{
		{"two StreamDone", "Terminal", "2 StreamDone events", streamModel(func(ctx context.Context, yield func(runlet.StreamEvent, error) bool) {
			if polite(ctx, yield) {
				yield(runlet.StreamEvent{Kind: runlet.StreamDone, Response: scriptedResponse()}, nil)
			}
		})},
		{"no StreamDone", "Terminal", "neither a StreamDone nor an error", streamModel(func(ctx context.Context, yield func(runlet.StreamEvent, error) bool) {
			yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: wantText}, nil)
		})},
		{"a delta after StreamDone", "Terminal", "1 events after the terminal one", streamModel(func(ctx context.Context, yield func(runlet.StreamEvent, error) bool) {
			if polite(ctx, yield) {
				yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "more"}, nil)
			}
		})},
		{"yields after a break", "Break", "panicked", streamModel(func(ctx context.Context, yield func(runlet.StreamEvent, error) bool) {
			for ev := range modelkit.StreamResponse(scriptedResponse()) {
				yield(ev, nil) // ignores false
			}
		})},
		{"ignores cancellation", "Cancel", "want an error wrapping context.Canceled", streamModel(func(ctx context.Context, yield func(runlet.StreamEvent, error) bool) {
			for ev := range modelkit.StreamResponse(scriptedResponse()) {
				if !yield(ev, nil) {
					return
				}
			}
		})},
		{"Generate differs", "Agree", "Generate and Stream disagree", struct{ runlet.Model }{disagree{}}},
		{"deltas do not add up", "Agree", "the text deltas say", streamModel(func(ctx context.Context, yield func(runlet.StreamEvent, error) bool) {
			if yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "Let me"}, nil) {
				yield(runlet.StreamEvent{Kind: runlet.StreamDone, Response: scriptedResponse()}, nil)
			}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := failures(t, func(tb testing.TB) { checks[tt.check](tb, tt.model) })
			if !strings.Contains(got, tt.want) {
				t.Errorf("%s check reported %q, want %q", tt.check, got, tt.want)
			}
		})
	}
	for name, check := range checks {
		good := &runlettest.Model{ChunkSize: 2, Func: func(context.Context, *runlet.ModelRequest) runlettest.Reply {
			return runlettest.Reply{Response: scriptedResponse()}
		}}
		if got := failures(t, func(tb testing.TB) { check(tb, good) }); got != "" {
			t.Errorf("%s check failed a correct model: %s", name, got)
		}
	}
}

// disagree answers Generate with another text than its stream.
type disagree struct{}

func (disagree) Generate(context.Context, *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	resp := scriptedResponse()
	resp.Message.Parts[1] = runlet.TextPart{Text: "Something else."}
	return resp, nil
}

func (disagree) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return modelkit.GenerateFunc(func(context.Context, *runlet.ModelRequest) (*runlet.ModelResponse, error) {
		return scriptedResponse(), nil
	}).Stream(ctx, req)
}

// leaky puts the key into its errors.
type leaky struct {
	runlet.Model
	key string
}

func (m leaky) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	resp, err := m.Model.Generate(ctx, req)
	if err != nil {
		err = fmt.Errorf("%w (sent key %s)", err, m.key)
	}
	return resp, err
}

// TestWireChecksFailALeakyModel: the Credentials check fails a model whose
// errors show the key, and passes the adapter it wraps.
func TestWireChecksFailALeakyModel(t *testing.T) {
	for _, leak := range []bool{false, true} {
		h := newHarness(t, AnthropicWire, func(t *testing.T, s Server) runlet.Model {
			var m runlet.Model = anthropic.NewMessages(anthropic.Config{BaseURL: s.BaseURL, APIKey: s.APIKey, HTTPClient: s.HTTPClient,
				MaxResponseBytes: s.MaxResponseBytes, MaxRetries: -1, Model: "m"})
			if leak {
				m = leaky{m, s.APIKey}
			}
			return m
		})
		got := failures(t, func(tb testing.TB) { wireCredentials(tb, h) })
		if leak != strings.Contains(got, "the error shows the API key") {
			t.Errorf("leaky %v: Credentials reported %q", leak, got)
		}
	}
}

// TestCheckStream passes a correct stream and fails one whose deltas do not
// add up to its response.
func TestCheckStream(t *testing.T) {
	if got := failures(t, func(tb testing.TB) { CheckStream(tb, modelkit.StreamResponse(scriptedResponse())) }); got != "" {
		t.Errorf("a correct stream failed: %s", got)
	}
	short := func(yield func(runlet.StreamEvent, error) bool) {
		if yield(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, ID: "c1", Name: "f", Delta: `{"a":`}, nil) {
			resp := &runlet.ModelResponse{Message: runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
				runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: []byte(`{"a":1}`)}}}}
			yield(runlet.StreamEvent{Kind: runlet.StreamDone, Response: resp}, nil)
		}
	}
	if got := failures(t, func(tb testing.TB) { CheckStream(tb, short) }); !strings.Contains(got, "the argument deltas say") {
		t.Errorf("CheckStream reported %q", got)
	}
}
