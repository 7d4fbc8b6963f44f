package temporal

import (
	"context"
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
