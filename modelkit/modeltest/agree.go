package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// The scripted exchange: reasoning, text, two tool calls (one with
// non-ASCII arguments) and usage.
const (
	wantReasoning = "The user asks for the weather in two cities; one call each."
	wantText      = "Let me look both up."
	wantInput     = 31
	wantOutput    = 47
)

var wantCalls = []call{
	{ID: "call_modeltest_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
	{ID: "call_modeltest_2", Name: "get_weather", Arguments: `{"city":"Zürich","unit":"C"}`},
}

// request is the request every check sends.
func request() *runlet.ModelRequest {
	return &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("What's the weather in Paris and Zürich?")}}
}

// exchangeReply is the scripted exchange as the fake server sends it.
func exchangeReply() runlettest.WireReply {
	r := runlettest.WireReply{
		Reasoning: wantReasoning, ReasoningSignature: "c2lnbmF0dXJlLW1vZGVsdGVzdA==",
		Text:  wantText,
		Usage: &runlettest.WireUsage{InputTokens: wantInput, OutputTokens: wantOutput},
	}
	for _, c := range wantCalls {
		r.ToolCalls = append(r.ToolCalls, runlettest.WireToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return r
}

// scriptedResponse is the scripted exchange as an in-process model answers.
func scriptedResponse() *runlet.ModelResponse {
	msg := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.ReasoningPart{Text: wantReasoning}, runlet.TextPart{Text: wantText},
	}}
	for _, c := range wantCalls {
		msg.Parts = append(msg.Parts, runlet.ToolCallPart{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)})
	}
	return &runlet.ModelResponse{Message: msg, FinishReason: runlet.FinishToolCalls, ID: "resp_modeltest",
		Usage: runlet.Usage{InputTokens: wantInput, OutputTokens: wantOutput, TotalTokens: wantInput + wantOutput}}
}

// call is a tool call as the checks compare it: arguments compacted.
type call struct{ ID, Name, Arguments string }

// summary is what Generate and Stream must agree on.
type summary struct {
	Text, Reasoning string
	Calls           []call
	Finish          runlet.FinishReason
	Usage           runlet.Usage
}

func summarise(resp *runlet.ModelResponse) summary {
	s := summary{Text: resp.Message.Text(), Reasoning: resp.Message.Reasoning(), Finish: resp.FinishReason, Usage: resp.Usage}
	for _, c := range resp.Message.ToolCalls() {
		s.Calls = append(s.Calls, call{ID: c.ID, Name: c.Name, Arguments: compact(string(c.Arguments))})
	}
	return s
}

// compact returns JSON text without insignificant space ("{}" for none);
// text that is not JSON as is.
func compact(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// checkScripted fails the test unless s is the scripted exchange.
func checkScripted(t testing.TB, what string, s summary) {
	t.Helper()
	want := summary{Text: wantText, Reasoning: wantReasoning, Finish: runlet.FinishToolCalls, Calls: wantCalls}
	got := s
	got.Usage = runlet.Usage{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: the response is not the scripted one:\n got %+v\nwant %+v", what, got, want)
	}
	if u := s.Usage; u.InputTokens != wantInput || u.OutputTokens != wantOutput || u.TotalTokens != wantInput+wantOutput {
		t.Errorf("%s: usage %+v, want %d input and %d output tokens, %d in all", what, u, wantInput, wantOutput, wantInput+wantOutput)
	}
}

// checkDeltas fails the test unless a stream's deltas add up to its
// response: text, reasoning, and each tool call's arguments byte for byte
// (no argument deltas standing for "{}"), its first delta carrying its ID
// and name.
func checkDeltas(t testing.TB, what string, s *streamed) {
	t.Helper()
	if s.done == nil {
		return
	}
	var text, reasoning strings.Builder
	args := map[int]*strings.Builder{}
	first := map[int]runlet.StreamEvent{}
	for _, ev := range s.deltas {
		switch ev.Kind {
		case runlet.StreamTextDelta:
			text.WriteString(ev.Delta)
		case runlet.StreamReasoningDelta:
			reasoning.WriteString(ev.Delta)
		case runlet.StreamToolCallDelta:
			if _, ok := first[ev.Index]; !ok {
				first[ev.Index] = ev
				args[ev.Index] = &strings.Builder{}
			}
			args[ev.Index].WriteString(ev.Delta)
		default:
			t.Errorf("%s: an event of unknown kind %d", what, ev.Kind)
		}
		if ev.Delta == "" && ev.Kind != runlet.StreamToolCallDelta {
			t.Errorf("%s: an empty delta %+v", what, ev)
		}
	}
	msg := s.done.Message
	if got := text.String(); got != msg.Text() {
		t.Errorf("%s: the text deltas say %q, the response %q", what, got, msg.Text())
	}
	if got := reasoning.String(); got != msg.Reasoning() {
		t.Errorf("%s: the reasoning deltas say %q, the response %q", what, got, msg.Reasoning())
	}
	calls := msg.ToolCalls()
	if len(first) != len(calls) {
		t.Errorf("%s: deltas of %d tool calls, %d in the response", what, len(first), len(calls))
	}
	for i, c := range calls {
		f, ok := first[i]
		if !ok {
			continue
		}
		if f.ID != c.ID || f.Name != c.Name {
			t.Errorf("%s: tool call %d: first delta has ID %q and name %q, the response %q and %q", what, i, f.ID, f.Name, c.ID, c.Name)
		}
		if got, want := args[i].String(), string(c.Arguments); got != want && !(got == "" && want == "{}") {
			t.Errorf("%s: tool call %d: the argument deltas say %s, the response %s", what, i, got, want)
		}
	}
}

func wireAgree(t testing.TB, h *harness) {
	h.srv.EnqueueReplies(exchangeReply(), exchangeReply())
	g, err := h.model.Generate(h.ctx(), request())
	if err != nil {
		noKey(t, "Generate", err)
		t.Fatalf("Generate: %v", err)
	}
	s := drain(t, "Stream", h.model.Stream(h.ctx(), request()), nil)
	if s.err != nil {
		t.Fatalf("Stream: %v", s.err)
	}
	agree(t, g, s)
	h.watch.waitClosed(t, "Agree")
}

func scriptedAgree(t testing.TB, m runlet.Model) {
	g, err := m.Generate(t.Context(), request())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	s := drain(t, "Stream", m.Stream(t.Context(), request()), nil)
	if s.err != nil {
		t.Fatalf("Stream: %v", s.err)
	}
	agree(t, g, s)
}

// agree fails the test unless Generate's response g and the stream s
// agree with each other and the script.
func agree(t testing.TB, g *runlet.ModelResponse, s *streamed) {
	t.Helper()
	if g == nil {
		t.Fatal("Generate returned no response and no error")
	}
	checkTerminal(t, "Stream", s)
	if s.done == nil {
		return
	}
	gs, ss := summarise(g), summarise(s.done)
	if !reflect.DeepEqual(gs, ss) {
		t.Errorf("Generate and Stream disagree:\nGenerate %s\n  Stream %s", show(gs), show(ss))
	}
	checkScripted(t, "Generate", gs)
	checkScripted(t, "Stream", ss)
	checkDeltas(t, "Stream", s)
}

func show(s summary) string { return fmt.Sprintf("%+v", s) }
