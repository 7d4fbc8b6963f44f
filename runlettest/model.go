package runlettest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/runlet/runlet"
)

// Reply is one scripted answer of a Model: a response, or an error, after
// an optional delay.
type Reply struct {
	Response *runlet.ModelResponse
	Err      error
	// Delay waits before answering (or before the first delta), honouring
	// the context: useful for cancellation tests.
	Delay time.Duration
}

// TextReply is a final answer with text.
func TextReply(text string) Reply {
	return Reply{Response: &runlet.ModelResponse{
		Message:      runlet.AssistantText(text),
		FinishReason: runlet.FinishStop,
		Usage:        runlet.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
	}}
}

// ToolCallReply asks for the given tool calls.
func ToolCallReply(calls ...runlet.ToolCallPart) Reply {
	msg := runlet.Message{Role: runlet.RoleAssistant}
	for _, c := range calls {
		msg.Parts = append(msg.Parts, c)
	}
	return Reply{Response: &runlet.ModelResponse{
		Message:      msg,
		FinishReason: runlet.FinishToolCalls,
		Usage:        runlet.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
	}}
}

// Call builds a tool call part with JSON arguments given as a string.
func Call(id, name, args string) runlet.ToolCallPart {
	return runlet.ToolCallPart{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// ErrorReply fails the model call with err.
func ErrorReply(err error) Reply { return Reply{Err: err} }

// Model is a scripted runlet.Model for tests. It answers from a queue of
// replies (or from Func), streams text in ChunkSize-rune deltas, and records
// every request. It is safe for concurrent use.
type Model struct {
	// ChunkSize is the number of runes per streamed text or reasoning delta;
	// 0 streams each part as one delta.
	ChunkSize int
	// Func, if set, answers instead of the queue.
	Func func(ctx context.Context, req *runlet.ModelRequest) Reply

	mu       sync.Mutex
	replies  []Reply
	requests []*runlet.ModelRequest
}

// NewModel returns a Model answering with replies, in order.
func NewModel(replies ...Reply) *Model { return &Model{replies: replies} }

// Push queues more replies.
func (m *Model) Push(replies ...Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replies = append(m.replies, replies...)
}

// Requests returns the requests received so far.
func (m *Model) Requests() []*runlet.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*runlet.ModelRequest(nil), m.requests...)
}

func (m *Model) next(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	n := len(m.requests)
	var r Reply
	switch {
	case m.Func != nil:
		m.mu.Unlock()
		r = m.Func(ctx, req)
		m.mu.Lock()
	case len(m.replies) == 0:
		m.mu.Unlock()
		return nil, fmt.Errorf("runlettest: no scripted reply left for request %d", n)
	default:
		r = m.replies[0]
		m.replies = m.replies[1:]
	}
	m.mu.Unlock()
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	if r.Response == nil {
		return nil, fmt.Errorf("runlettest: reply %d has neither a response nor an error", n)
	}
	resp := *r.Response
	return &resp, nil
}

// Generate implements runlet.Model.
func (m *Model) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	return m.next(ctx, req)
}

// Stream implements runlet.Model.
func (m *Model) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		resp, err := m.next(ctx, req)
		if err != nil {
			yield(runlet.StreamEvent{}, err)
			return
		}
		send := func(ev runlet.StreamEvent) bool {
			if err := ctx.Err(); err != nil {
				yield(runlet.StreamEvent{}, err)
				return false
			}
			return yield(ev, nil)
		}
		idx := 0
		for _, p := range resp.Message.Parts {
			switch p := p.(type) {
			case runlet.TextPart:
				for _, c := range chunks(p.Text, m.ChunkSize) {
					if !send(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: c}) {
						return
					}
				}
			case runlet.ReasoningPart:
				for _, c := range chunks(p.Text, m.ChunkSize) {
					if !send(runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: c}) {
						return
					}
				}
			case runlet.ToolCallPart:
				for k, c := range append([]string{""}, chunks(string(p.Arguments), m.ChunkSize)...) {
					ev := runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: idx, Delta: c}
					if k == 0 {
						ev.ID, ev.Name = p.ID, p.Name
					}
					if !send(ev) {
						return
					}
				}
				idx++
			}
		}
		send(runlet.StreamEvent{Kind: runlet.StreamDone, Response: resp})
	}
}
