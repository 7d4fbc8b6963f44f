package temporal

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// gateModel streams its answer's first half, waits for release, then the
// rest: a run cannot finish before the test let it.
type gateModel struct {
	first, rest string
	release     chan struct{}
}

func (m *gateModel) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	return &runlet.ModelResponse{Message: runlet.AssistantText(m.first + m.rest), FinishReason: runlet.FinishStop}, nil
}

func (m *gateModel) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		if !yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: m.first}, nil) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(runlet.StreamEvent{}, ctx.Err())
			return
		}
		for _, w := range strings.SplitAfter(m.rest, " ") {
			if !yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: w}, nil) {
				return
			}
		}
		yield(runlet.StreamEvent{Kind: runlet.StreamDone, Response: &runlet.ModelResponse{
			Message: runlet.AssistantText(m.first + m.rest), FinishReason: runlet.FinishStop,
			Usage: runlet.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 2},
		}}, nil)
	}
}

// TestDeltasReachTheCallerWhileTheRunGoesOn: the caller, in another
// "process" (over HTTP), gets the first tokens of the answer while the
// model activity still streams (the model waits for the test before it
// goes on), then the rest, then the end of the call; then the Result.
func TestDeltasReachTheCallerWhileTheRunGoesOn(t *testing.T) {
	s := startServer(t)
	c := dial(t, s)
	model := &gateModel{first: "Durable ", rest: "runs stream tokens.", release: make(chan struct{})}
	hub := NewHub()
	srv := httptest.NewServer(hub)
	defer srv.Close()
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "talker", Model: model}}, Publisher: hub})
	queue := "stream-" + t.Name()
	w := worker.New(c, queue, workerOptions())
	d.Register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := uniqueID("talk")
	deltas, err := SubscribeHTTP(ctx, srv.URL, id)
	if err != nil {
		t.Fatal(err)
	}
	run, err := Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, RunInput{Agent: "talker", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var got []Delta
	for dl, err := range deltas {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, dl)
		if len(got) == 1 {
			// The model waits: the run has not finished.
			if dl.Kind != DeltaText || dl.Text != "Durable " || dl.Turn != 1 || dl.Attempt != 1 || dl.Seq != 1 || dl.WorkflowID != id {
				t.Fatalf("first delta %+v", dl)
			}
			p, err := GetProgress(ctx, c, id)
			if err != nil || p.State != runlet.StateThinking {
				t.Fatalf("progress while streaming: %+v, %v", p, err)
			}
			close(model.release)
		}
		if dl.Kind == DeltaEnd {
			break
		}
		text.WriteString(dl.Text)
	}
	res, err := Wait(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != res.Output || len(got) < 4 || got[len(got)-1].Seq != len(got) {
		t.Fatalf("streamed %q in %d deltas, output %q", text.String(), len(got), res.Output)
	}
}

func TestHubDropsASubscriberThatFallsBehind(t *testing.T) {
	hub := NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow := hub.Subscribe(ctx, "w")
	other := hub.Subscribe(ctx, "other")
	for i := range hubBuffer + 1 {
		hub.Publish(ctx, Delta{WorkflowID: "w", Seq: i + 1, Kind: DeltaText})
	}
	n := 0
	for range slow {
		n++
	}
	if n != hubBuffer {
		t.Fatalf("the slow subscriber got %d deltas before its channel closed, want %d", n, hubBuffer)
	}
	cancel()
	if _, open := <-other; open {
		t.Fatal("a subscriber's channel stays open after its context ended")
	}
	hub.Publish(context.Background(), Delta{WorkflowID: "w"}) // no subscribers: nothing to do
}

// flakyStream streams "Hel", fails (retryably) on its first call, and
// streams the whole answer on the next.
type flakyStream struct{ calls int }

func (m *flakyStream) Generate(context.Context, *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	return nil, errors.New("unused")
}

func (m *flakyStream) Stream(context.Context, *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	m.calls++
	first := m.calls == 1
	return func(yield func(runlet.StreamEvent, error) bool) {
		if !yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "Hel"}, nil) {
			return
		}
		if first {
			yield(runlet.StreamEvent{}, &runlet.ProviderError{Provider: "fake", StatusCode: 503, Retryable: true})
			return
		}
		if yield(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "lo"}, nil) {
			yield(runlet.StreamEvent{Kind: runlet.StreamDone, Response: &runlet.ModelResponse{Message: runlet.AssistantText("Hello"), FinishReason: runlet.FinishStop}}, nil)
		}
	}
}

// TestRetriedModelCallStreamsAgain: a model call that failed after a
// delta is retried; its deltas come again under the next Attempt, each
// attempt numbered from 1, so a subscriber can start the turn over.
func TestRetriedModelCallStreamsAgain(t *testing.T) {
	hub := NewHub()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deltas := hub.Subscribe(ctx, "default-test-workflow-id")
	d := mustNew(t, Config{Agents: []*runlet.Agent{{Name: "a", Model: &flakyStream{}}}, Publisher: hub})
	e := env(t, d)
	e.ExecuteWorkflow(WorkflowName, RunInput{Agent: "a", Input: "hi"})
	var res runlet.Result
	if err := e.GetWorkflowResult(&res); err != nil || res.Output != "Hello" {
		t.Fatalf("result %q, %v", res.Output, err)
	}
	var got []string
	for len(got) < 4 {
		select {
		case d := <-deltas:
			got = append(got, fmt.Sprintf("%d/%d/%s:%s", d.Attempt, d.Seq, d.Kind, d.Text))
		case <-time.After(30 * time.Second): // a hang guard: they were published before the run ended
			t.Fatalf("deltas so far %v", got)
		}
	}
	want := []string{"1/1/text:Hel", "2/1/text:Hel", "2/2/text:lo", "2/3/end:"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("deltas %v, want %v", got, want)
	}
}
