package modeltest

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// streamed is what a consumer saw of one stream.
type streamed struct {
	deltas []runlet.StreamEvent  // the events before the terminal one
	err    error                 // the first error
	done   *runlet.ModelResponse // the first StreamDone's response
	dones  int                   // StreamDone events
	after  int                   // events or errors after the terminal one
	panic  any                   // a panic out of the iterator
}

// drain ranges over seq in a goroutine, handing each event to visit (nil:
// range to the end), which returns false to break. It fails the test if
// the stream has not ended within the hang guard.
func drain(t testing.TB, what string, seq iter.Seq2[runlet.StreamEvent, error], visit func(runlet.StreamEvent, error) bool) *streamed {
	t.Helper()
	s := &streamed{}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer func() { s.panic = recover() }()
		terminal := false
		for ev, err := range seq {
			switch {
			case terminal:
				s.after++
			case err != nil:
				s.err, terminal = err, true
			case ev.Kind == runlet.StreamDone:
				s.done, terminal = ev.Response, true
			default:
				s.deltas = append(s.deltas, ev)
			}
			if err == nil && ev.Kind == runlet.StreamDone {
				s.dones++
			}
			if visit != nil && !visit(ev, err) {
				return
			}
		}
	}()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	select {
	case <-finished:
	case <-timer.C:
		t.Fatalf("%s: the stream did not end within %v", what, guard)
	}
	if s.panic != nil {
		t.Fatalf("%s: the stream panicked (yield called after the consumer stopped?): %v", what, s.panic)
	}
	noKey(t, what, s.err)
	return s
}

// checkTerminal fails the test unless the stream ended with exactly one
// terminal event and yielded nothing after it.
func checkTerminal(t testing.TB, what string, s *streamed) {
	t.Helper()
	switch {
	case s.err == nil && s.dones == 0:
		t.Errorf("%s: the stream ended with neither a StreamDone nor an error", what)
	case s.dones > 1:
		t.Errorf("%s: %d StreamDone events, want one", what, s.dones)
	case s.err != nil && s.dones > 0:
		t.Errorf("%s: the stream yielded both a StreamDone and an error (%v)", what, s.err)
	case s.dones == 1 && s.done == nil:
		t.Errorf("%s: a StreamDone without a Response", what)
	}
	if s.after > 0 {
		t.Errorf("%s: %d events after the terminal one", what, s.after)
	}
}

// breakAtDone stops ranging at the StreamDone event.
func breakAtDone(ev runlet.StreamEvent, err error) bool {
	return err != nil || ev.Kind != runlet.StreamDone
}

// breakAtFirstDelta stops ranging at the first delta.
func breakAtFirstDelta(runlet.StreamEvent, error) bool { return false }

// cancelAtFirstDelta cancels at the first delta and keeps ranging.
func cancelAtFirstDelta(cancel context.CancelFunc) func(runlet.StreamEvent, error) bool {
	return func(ev runlet.StreamEvent, err error) bool {
		if err == nil && ev.Kind != runlet.StreamDone {
			cancel()
		}
		return true
	}
}

// longReply is a reply with many text deltas, so faults after its first
// events land mid-stream.
func longReply() runlettest.WireReply {
	return runlettest.WireReply{Text: strings.Repeat("All work and no play. ", 100), Usage: &runlettest.WireUsage{InputTokens: 5, OutputTokens: 550}}
}

// stallAt is where the fake server stalls or cuts a long reply: after
// some deltas on every wire, long before its end.
const stallAt = 8

func wireTerminal(t testing.TB, h *harness) {
	h.srv.EnqueueReplies(exchangeReply(), exchangeReply())
	s := drain(t, "stream ranged to the end", h.model.Stream(h.ctx(), request()), nil)
	if s.err != nil {
		t.Fatalf("stream: %v", s.err)
	}
	checkTerminal(t, "stream ranged to the end", s)
	s = drain(t, "stream left at StreamDone", h.model.Stream(h.ctx(), request()), breakAtDone)
	if s.err != nil || s.dones != 1 {
		t.Errorf("stream left at StreamDone: %d StreamDone, error %v", s.dones, s.err)
	}

	// An error event mid-stream is terminal too.
	r := longReply()
	r.Error, r.ErrorAfter = &runlettest.WireError{Type: "server_error", Message: "the server failed"}, stallAt
	h.srv.EnqueueReplies(r)
	s = drain(t, "stream with an error event", h.model.Stream(h.ctx(), request()), nil)
	if s.err == nil {
		t.Errorf("stream with an error event: no error")
	}
	checkTerminal(t, "stream with an error event", s)
	h.watch.waitClosed(t, "Terminal")
}

func wireBreak(t testing.TB, h *harness) {
	h.srv.EnqueueReplies(longReply())
	h.srv.InjectFault(runlettest.Fault{Stall: true, AfterEvents: stallAt})
	s := drain(t, "stream left at the first delta", h.model.Stream(h.ctx(), request()), breakAtFirstDelta)
	if s.err != nil || len(s.deltas) != 1 {
		t.Fatalf("stream left at the first delta: %d deltas, error %v", len(s.deltas), s.err)
	}
	h.watch.waitClosed(t, "stream left at the first delta")

	// The model is still usable.
	h.srv.EnqueueReplies(exchangeReply())
	if _, err := h.model.Generate(h.ctx(), request()); err != nil {
		noKey(t, "Generate after a break", err)
		t.Errorf("Generate after a break: %v", err)
	}
}

func wireCancel(t testing.TB, h *harness) {
	h.srv.EnqueueReplies(longReply())
	h.srv.InjectFault(runlettest.Fault{Stall: true, AfterEvents: stallAt})
	ctx, cancel := context.WithCancel(h.ctx())
	defer cancel()
	s := drain(t, "stream cancelled mid-stream", h.model.Stream(ctx, request()), cancelAtFirstDelta(cancel))
	checkCancelled(t, "stream cancelled mid-stream", s)
	h.watch.waitClosed(t, "stream cancelled mid-stream")

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	sent := len(h.srv.Requests())
	_, err := h.model.Generate(ctx, request())
	noKey(t, "Generate with a cancelled context", err)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Generate with a cancelled context: %v, want an error wrapping context.Canceled", err)
	}
	s = drain(t, "Stream with a cancelled context", h.model.Stream(ctx, request()), nil)
	checkCancelled(t, "Stream with a cancelled context", s)
	if n := len(h.srv.Requests()) - sent; n != 0 {
		t.Errorf("calls with a cancelled context sent %d requests", n)
	}
}

// checkCancelled fails the test unless a cancelled stream ended with the
// context's error, and no StreamDone.
func checkCancelled(t testing.TB, what string, s *streamed) {
	t.Helper()
	if !errors.Is(s.err, context.Canceled) {
		t.Errorf("%s: ended with %v, want an error wrapping context.Canceled", what, s.err)
	}
	checkTerminal(t, what, s)
}

func scriptedTerminal(t testing.TB, m runlet.Model) {
	s := drain(t, "stream ranged to the end", m.Stream(context.Background(), request()), nil)
	if s.err != nil {
		t.Fatalf("stream: %v", s.err)
	}
	checkTerminal(t, "stream ranged to the end", s)
	s = drain(t, "stream left at StreamDone", m.Stream(context.Background(), request()), breakAtDone)
	if s.err != nil || s.dones != 1 {
		t.Errorf("stream left at StreamDone: %d StreamDone, error %v", s.dones, s.err)
	}
}

func scriptedBreak(t testing.TB, m runlet.Model) {
	s := drain(t, "stream left at the first delta", m.Stream(context.Background(), request()), breakAtFirstDelta)
	if s.err != nil || len(s.deltas) != 1 {
		t.Errorf("stream left at the first delta: %d deltas, error %v", len(s.deltas), s.err)
	}
}

func scriptedCancel(t testing.TB, m runlet.Model) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := drain(t, "stream cancelled mid-stream", m.Stream(ctx, request()), cancelAtFirstDelta(cancel))
	checkCancelled(t, "stream cancelled mid-stream", s)
	s = drain(t, "Stream with a cancelled context", m.Stream(ctx, request()), nil)
	checkCancelled(t, "Stream with a cancelled context", s)
}

// CheckStream ranges over a model's stream to its end and returns its
// response, failing the test unless the stream succeeds with exactly one
// StreamDone, yields nothing after it, and its deltas add up to the
// response (text, reasoning, each tool call's arguments, the call's first
// delta carrying its ID and name). The suite runs these checks on its
// scripted exchange; CheckStream runs them on any other, such as an
// adapter's recorded traffic.
func CheckStream(t testing.TB, seq iter.Seq2[runlet.StreamEvent, error]) *runlet.ModelResponse {
	t.Helper()
	s := drain(t, "stream", seq, nil)
	if s.err != nil {
		t.Fatalf("stream: %v", s.err)
	}
	checkTerminal(t, "stream", s)
	checkDeltas(t, "stream", s)
	return s.done
}
