package temporal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"sync"

	"go.temporal.io/sdk/activity"
)

// Streaming to the caller. A workflow's history is the wrong place for
// tokens: every event is persisted and replayed, and a streamed answer is
// hundreds of them, so signals, updates or per-token activities would undo
// what Config.Payloads does for the history's size, and a query can only
// read the workflow's state, which sees a model call's answer only when
// its activity completes. So the model activity, which holds the stream,
// publishes its deltas to a side channel, Config.Publisher, keyed by
// workflow ID, and the caller subscribes to that channel: the tokens go
// from the worker to the caller directly, and the workflow's history never
// holds them. Hub is such a channel inside one process, with an HTTP
// (server-sent events) endpoint for callers in others; an application
// with many workers implements Publisher over its own broker (Redis
// pub/sub, NATS, a WebSocket fan-out).

// Delta is one piece of a model call's streamed answer, as the model
// activity publishes it.
type Delta struct {
	// WorkflowID is the run's workflow; RunID is Runlet's run ID.
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	// Turn is the model call (from 1). Attempt is its activity's attempt:
	// a call retried after a failure or a crash streams again from the
	// start under a higher Attempt, so a subscriber drops what it showed
	// of the turn's lower attempts.
	Turn    int   `json:"turn"`
	Attempt int32 `json:"attempt"`
	// Seq numbers the deltas of one attempt of one turn, from 1.
	Seq int `json:"seq"`
	// Kind is DeltaText, DeltaReasoning, DeltaEnd or DeltaWithdrawn.
	Kind string `json:"kind"`
	Text string `json:"text,omitempty"`
}

// Kinds of Delta.
const (
	DeltaText      = "text"
	DeltaReasoning = "reasoning"
	// DeltaEnd: the model call's answer is complete (Text is empty). The
	// run goes on (tool calls, the next turn) until Wait returns.
	DeltaEnd = "end"
	// DeltaWithdrawn: a guardrail tripped on the answer streamed so far in
	// this turn; take it back (the run fails).
	DeltaWithdrawn = "withdrawn"
)

// Publisher receives the deltas of the model activities of a worker
// (Config.Publisher). Publish is called on the activity's goroutine, in
// order, and must be quick: delivery is best effort, and the run never
// waits for a subscriber.
type Publisher interface {
	Publish(ctx context.Context, d Delta)
}

// publisher numbers and publishes one model activity's deltas.
type publisher struct {
	p    Publisher
	base Delta
	mu   sync.Mutex
	seq  int
}

func newPublisher(ctx context.Context, p Publisher, runID string, turn int) *publisher {
	if p == nil || !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	return &publisher{p: p, base: Delta{WorkflowID: info.WorkflowExecution.ID, RunID: runID, Turn: turn, Attempt: info.Attempt}}
}

func (p *publisher) publish(ctx context.Context, kind, text string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	d := p.base
	d.Seq, d.Kind, d.Text = p.seq, kind, text
	p.p.Publish(ctx, d)
}

// Hub is a Publisher that hands deltas to the subscribers of their
// workflow in this process (Subscribe), and to callers in other processes
// through its HTTP handler (ServeHTTP, read by SubscribeHTTP). A
// subscriber that falls behind by more than its buffer is dropped: its
// channel closes, and the caller gets the rest from the Result. Give
// each worker process its own Hub and its callers its address: deltas of
// a run reach the Hub of the worker that runs its model call, so with
// several workers a caller subscribes to each (or use a shared broker).
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[chan Delta]struct{}
}

// hubBuffer is how many deltas a subscriber may fall behind.
const hubBuffer = 4096

// NewHub returns a Hub without subscribers.
func NewHub() *Hub { return &Hub{subs: map[string]map[chan Delta]struct{}{}} }

// Publish hands d to the subscribers of d.WorkflowID, without waiting.
func (h *Hub) Publish(_ context.Context, d Delta) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[d.WorkflowID] {
		select {
		case ch <- d:
		default: // fell behind: dropped
			h.remove(d.WorkflowID, ch)
		}
	}
}

// Subscribe returns the deltas of workflowID published from now on; the
// channel closes when ctx ends or the subscriber falls behind.
func (h *Hub) Subscribe(ctx context.Context, workflowID string) <-chan Delta {
	ch := make(chan Delta, hubBuffer)
	h.mu.Lock()
	if h.subs[workflowID] == nil {
		h.subs[workflowID] = map[chan Delta]struct{}{}
	}
	h.subs[workflowID][ch] = struct{}{}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.remove(workflowID, ch)
	})
	return ch
}

// remove closes ch and forgets it (h.mu held); once only.
func (h *Hub) remove(workflowID string, ch chan Delta) {
	subs := h.subs[workflowID]
	if _, ok := subs[ch]; !ok {
		return
	}
	delete(subs, ch)
	if len(subs) == 0 {
		delete(h.subs, workflowID)
	}
	close(ch)
}

// ServeHTTP streams the deltas of the workflow named by the query
// parameter "workflow_id" as server-sent events, one JSON Delta per
// "data:" line, from the moment the response's headers are sent until
// the client goes away. It serves any workflow it is asked for: put it
// behind the application's authentication.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("workflow_id")
	flusher, ok := w.(http.Flusher)
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	case id == "":
		http.Error(w, "workflow_id is required", http.StatusBadRequest)
		return
	case !ok:
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch := h.Subscribe(r.Context(), id)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher.Flush() // the caller knows it is subscribed
	for d := range ch {
		b, err := json.Marshal(d)
		if err != nil {
			continue
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		flusher.Flush()
	}
}

// maxSSELine bounds one event line SubscribeHTTP reads.
const maxSSELine = 1 << 20

// SubscribeHTTP subscribes to the deltas of workflowID at a Hub's HTTP
// endpoint (hubURL) and returns them as they arrive. It returns once the
// subscription holds, so a caller that subscribes before it starts the
// run misses nothing; the sequence ends when ctx ends or the Hub drops the
// subscriber, with an error if the connection failed.
func SubscribeHTTP(ctx context.Context, hubURL, workflowID string) (iter.Seq2[Delta, error], error) {
	u, err := url.Parse(hubURL)
	if err != nil {
		return nil, fmt.Errorf("runlet/temporal: hub URL: %w", err)
	}
	q := u.Query()
	q.Set("workflow_id", workflowID)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("runlet/temporal: subscribing to %s: %w", u.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("runlet/temporal: subscribing to %s: %s", u.Redacted(), resp.Status)
	}
	return func(yield func(Delta, error) bool) {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 4096), maxSSELine)
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok {
				continue
			}
			var d Delta
			if err := json.Unmarshal(data, &d); err != nil {
				if !yield(Delta{}, fmt.Errorf("runlet/temporal: a delta: %w", err)) {
					return
				}
				continue
			}
			if !yield(d, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil && ctx.Err() == nil {
			yield(Delta{}, fmt.Errorf("runlet/temporal: reading deltas: %w", err))
		}
	}, nil
}
