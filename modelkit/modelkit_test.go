package modelkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
)

func allParts() runlet.Message {
	return runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.TextPart{Text: "héllo"},
		runlet.ReasoningPart{Text: "thinking", Signature: "sig==", Provider: "anthropic"},
		runlet.ToolCallPart{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":[1,2]}`)},
		runlet.ImagePart{URL: "https://example.com/a.jpg"},
	}}
}

func TestAccumulator(t *testing.T) {
	var a modelkit.Accumulator
	for _, ev := range []runlet.StreamEvent{
		{Kind: runlet.StreamReasoningDelta, Delta: "think "},
		{Kind: runlet.StreamReasoningDelta, Delta: "more"},
		{Kind: runlet.StreamTextDelta, Delta: "Hel"},
		{Kind: runlet.StreamTextDelta, Delta: "lo"},
		{Kind: runlet.StreamToolCallDelta, Index: 1, ID: "b", Name: "g", Delta: `{"y"`},
		{Kind: runlet.StreamToolCallDelta, Index: 0, ID: "a", Name: "f"},
		{Kind: runlet.StreamToolCallDelta, Index: 1, Delta: `:2}`},
		{Kind: runlet.StreamToolCallDelta, Index: 0, Delta: "   "},
	} {
		a.Add(ev)
	}
	a.SetReasoningState(runlet.ReasoningPart{Signature: "sig", Provider: "x"})
	resp := a.Response(runlet.Usage{InputTokens: 3}, "")
	want := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.ReasoningPart{Text: "think more"},
		runlet.TextPart{Text: "Hello"},
		runlet.ToolCallPart{ID: "b", Name: "g", Arguments: json.RawMessage(`{"y":2}`)},
		runlet.ToolCallPart{ID: "a", Name: "f", Arguments: json.RawMessage(`{}`)},
		runlet.ReasoningPart{Signature: "sig", Provider: "x"},
	}}
	if !reflect.DeepEqual(resp.Message, want) || resp.FinishReason != runlet.FinishToolCalls {
		t.Fatalf("got %+v", resp)
	}
	var b modelkit.Accumulator
	b.Add(runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: "a"})
	b.SetReasoningState(runlet.ReasoningPart{Signature: "s1"})
	b.EndPart()
	b.Add(runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: "b"})
	if got := b.Message().Parts; len(got) != 2 || got[0].(runlet.ReasoningPart).Signature != "s1" {
		t.Fatalf("EndPart: %+v", got)
	}
}

func TestStreamResponseAndCollect(t *testing.T) {
	resp := &runlet.ModelResponse{Message: allParts(), FinishReason: runlet.FinishToolCalls}
	gen := func(context.Context, *runlet.ModelRequest) (*runlet.ModelResponse, error) { return resp, nil }
	var a modelkit.Accumulator
	var final *runlet.ModelResponse
	for ev, err := range modelkit.GenerateFunc(gen).Stream(context.Background(), &runlet.ModelRequest{}) {
		if err != nil {
			t.Fatal(err)
		}
		a.Add(ev)
		if ev.Kind == runlet.StreamDone {
			final = ev.Response
		}
	}
	if final != resp || a.Message().Text() != resp.Message.Text() || len(a.Message().ToolCalls()) != 1 {
		t.Fatalf("final %v, accumulated %+v", final, a.Message())
	}
	got, err := modelkit.Collect(modelkit.StreamResponse(resp))
	if err != nil || got != resp {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	failing := modelkit.GenerateFunc(func(context.Context, *runlet.ModelRequest) (*runlet.ModelResponse, error) {
		return nil, boom
	})
	if _, err = modelkit.Collect(failing.Stream(context.Background(), nil)); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// StreamFunc's Generate drains its stream.
	streamed := modelkit.StreamFunc(func(context.Context, *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
		return modelkit.StreamResponse(resp)
	})
	if got, err := streamed.Generate(context.Background(), nil); err != nil || got != resp {
		t.Fatalf("StreamFunc.Generate: %v %v", got, err)
	}
	_, err = modelkit.Collect(func(func(runlet.StreamEvent, error) bool) {})
	if !errors.Is(err, runlet.ErrStreamIncomplete) {
		t.Fatalf("empty stream: %v", err)
	}
}

// Parts grow while earlier ones are still being written (interleaved
// parallel tool calls): each call's arguments must come out whole.
func TestAccumulatorInterleavedGrowth(t *testing.T) {
	var a modelkit.Accumulator
	const calls = 40
	for i := range calls {
		a.Add(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: i, ID: fmt.Sprint("c", i), Name: "f", Delta: `{"n":`})
		for j := range i {
			a.Add(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: j, Delta: " "})
		}
	}
	for i := range calls {
		a.Add(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: i, Delta: fmt.Sprint(i, "}")})
	}
	got := a.Message().ToolCalls()
	if len(got) != calls {
		t.Fatalf("%d calls", len(got))
	}
	for i, c := range got {
		var v struct{ N int }
		if err := json.Unmarshal(c.Arguments, &v); err != nil || v.N != i || c.ID != fmt.Sprint("c", i) {
			t.Fatalf("call %d: %s %v", i, c.Arguments, err)
		}
	}
}

// Continuation state survives accumulation: a reasoning part's structured
// details and a tool call's item ID, provider and signature reach the
// assembled message, whether set before or after the call's deltas.
func TestAccumulatorContinuationState(t *testing.T) {
	var a modelkit.Accumulator
	a.Add(runlet.StreamEvent{Kind: runlet.StreamReasoningDelta, Delta: "hm"})
	a.SetReasoningState(runlet.ReasoningPart{Details: `[{"type":"reasoning.text"}]`, Provider: "p", Text: "ignored"})
	a.SetReasoningState(runlet.ReasoningPart{Signature: "s"}) // keeps Details and Provider
	a.SetToolCallState(0, runlet.ToolCallPart{Signature: "sig0", Provider: "p", ID: "ignored"})
	a.Add(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: 0, ID: "c0", Name: "f", Delta: `{}`})
	a.Add(runlet.StreamEvent{Kind: runlet.StreamToolCallDelta, Index: 1, ID: "c1", Name: "g", Delta: `{"a":1}`})
	a.SetToolCallState(1, runlet.ToolCallPart{ItemID: "fc_1"})
	a.SetToolCallState(1, runlet.ToolCallPart{Provider: "p"}) // keeps ItemID
	want := []runlet.Part{
		runlet.ReasoningPart{Text: "hm", Signature: "s", Provider: "p", Details: `[{"type":"reasoning.text"}]`},
		runlet.ToolCallPart{ID: "c0", Name: "f", Arguments: json.RawMessage(`{}`), Provider: "p", Signature: "sig0"},
		runlet.ToolCallPart{ID: "c1", Name: "g", Arguments: json.RawMessage(`{"a":1}`), ItemID: "fc_1", Provider: "p"},
	}
	if got := a.Message().Parts; !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
}
