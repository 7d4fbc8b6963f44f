package runlet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// conversation returns n turns; turn i is a user message, and for odd i a
// tool call with its result, then an assistant answer.
func conversation(n int) []runlet.Message {
	var msgs []runlet.Message
	for i := range n {
		msgs = append(msgs, runlet.UserText(fmt.Sprintf("question %d %s", i, strings.Repeat("x", 40))))
		if i%2 == 1 {
			id := fmt.Sprint("call", i)
			msgs = append(msgs,
				runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlettest.Call(id, "get_weather", `{"city":"x"}`)}},
				runlet.Message{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: id, Content: "sunny"}}})
		}
		msgs = append(msgs, runlet.AssistantText(fmt.Sprintf("answer %d", i)))
	}
	return msgs
}

// checkPairs fails if a tool result appears without its call before it.
func checkPairs(t *testing.T, msgs []runlet.Message) {
	t.Helper()
	calls := map[string]bool{}
	if len(msgs) > 0 && msgs[0].Role != runlet.RoleUser {
		t.Fatalf("window starts with a %s message", msgs[0].Role)
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case runlet.ToolCallPart:
				calls[p.ID] = true
			case runlet.ToolResultPart:
				if !calls[p.CallID] {
					t.Fatalf("result %s without its call", p.CallID)
				}
			}
		}
	}
}

func runPrepared(t *testing.T, p runlet.Preparer, history []runlet.Message) (*runlettest.Model, []runlet.Event, error) {
	t.Helper()
	model := runlettest.NewModel(runlettest.TextReply("ok"))
	var evs []runlet.Event
	obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) { evs = append(evs, ev) })
	_, err := runlet.NewRuntime(runlet.WithPreparers(p), runlet.WithObservers(obs)).
		Run(context.Background(), &runlet.Agent{Model: model}, "latest question", runlet.WithHistory(history...))
	return model, evs, err
}

func prepared(evs []runlet.Event) *runlet.ContextPrepared {
	for _, e := range evs {
		if p, ok := e.(*runlet.ContextPrepared); ok {
			return p
		}
	}
	return nil
}

func TestKeepLastTurns(t *testing.T) {
	model, evs, err := runPrepared(t, runlet.KeepLastTurns(2), conversation(5))
	if err != nil {
		t.Fatal(err)
	}
	msgs := model.Requests()[0].Messages
	checkPairs(t, msgs)
	if got := len(turnsOf(msgs)); got != 2 || msgs[len(msgs)-1].Text() != "latest question" {
		t.Fatalf("%d turns kept: %+v", got, msgs)
	}
	p := prepared(evs)
	if p == nil || !p.Changed || p.MessagesBefore != 15 || p.MessagesAfter != len(msgs) || len(p.Notes) != 1 {
		t.Fatalf("context.prepared = %+v", p)
	}
}

func turnsOf(msgs []runlet.Message) []int {
	var s []int
	for i, m := range msgs {
		if m.Role == runlet.RoleUser {
			s = append(s, i)
		}
	}
	return s
}

func TestTokenBudget(t *testing.T) {
	hist := conversation(8)
	full := 0
	for _, m := range hist {
		full += runlet.EstimateTokens(m)
	}
	t.Run("fits unchanged", func(t *testing.T) {
		model, evs, err := runPrepared(t, runlet.TokenBudget(full*2, nil), hist)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(model.Requests()[0].Messages); got != len(hist)+1 {
			t.Fatalf("messages %d", got)
		}
		if p := prepared(evs); p.Changed || p.EstimatedTokens == 0 {
			t.Fatalf("context.prepared = %+v", p)
		}
	})
	t.Run("drops oldest whole turns", func(t *testing.T) {
		model, evs, err := runPrepared(t, runlet.TokenBudget(full/2, nil), hist)
		if err != nil {
			t.Fatal(err)
		}
		msgs := model.Requests()[0].Messages
		checkPairs(t, msgs)
		sum := 0
		for _, m := range msgs {
			sum += runlet.EstimateTokens(m)
		}
		if sum > full/2 || len(msgs) >= len(hist) {
			t.Fatalf("kept %d messages, %d tokens, budget %d", len(msgs), sum, full/2)
		}
		if p := prepared(evs); !p.Changed || p.EstimatedTokens > full/2 {
			t.Fatalf("context.prepared = %+v", p)
		}
	})
	t.Run("overflow", func(t *testing.T) {
		_, evs, err := runPrepared(t, runlet.TokenBudget(5, nil), hist)
		if !errors.Is(err, runlet.ErrContextOverflow) {
			t.Fatalf("err = %v", err)
		}
		if f := evs[len(evs)-1].(*runlet.RunFailed); f.Policy != "context_overflow" {
			t.Fatalf("policy %q", f.Policy)
		}
	})
}

func TestTokenBudgetAnchorsOnReportedUsage(t *testing.T) {
	// The provider reports 900 input tokens for the first call; the budget is
	// 1050. The tool result added afterwards (~200 tokens by estimate) must
	// push the estimate over budget, so the second request drops old turns,
	// even though a pure estimate of the whole history would be far lower.
	model := runlettest.NewModel(
		runlettest.Reply{Response: &runlet.ModelResponse{
			Message:      runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{runlettest.Call("c1", "big", `{}`)}},
			FinishReason: runlet.FinishToolCalls,
			Usage:        runlet.Usage{InputTokens: 900, OutputTokens: 10},
		}},
		runlettest.TextReply("done"),
	)
	big := runlet.NewTool("big", "", func(ctx context.Context, _ struct{}) (string, error) {
		return strings.Repeat("data ", 160), nil // 800 bytes ≈ 200 tokens
	})
	hist := conversation(3)
	_, err := runlet.NewRuntime(runlet.WithPreparers(runlet.TokenBudget(1050, nil))).
		Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{big}}, "go", runlet.WithHistory(hist...))
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if len(reqs[0].Messages) != len(hist)+1 {
		t.Fatalf("first request trimmed: %d", len(reqs[0].Messages))
	}
	second := reqs[1].Messages
	checkPairs(t, second)
	full := len(hist) + 3
	if len(second) >= full {
		t.Fatalf("second request was not trimmed (%d messages)", len(second))
	}
	// A pure estimate of the whole history fits the budget: only the anchor
	// on reported usage makes the preparer trim.
	pure := 0
	for _, m := range append(append([]runlet.Message{}, hist...), reqs[1].Messages[len(second)-3:]...) {
		pure += runlet.EstimateTokens(m)
	}
	if pure >= 1050 {
		t.Fatalf("test premise broken: pure estimate %d", pure)
	}
}

func TestSummarizer(t *testing.T) {
	summaries := runlettest.NewModel()
	summaries.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		in := req.Messages[0].Text()
		return runlettest.TextReply(fmt.Sprintf("summary#%d(%d bytes)", len(summaries.Requests()), len(in)))
	}
	s := runlet.Summarizer(runlet.SummarizerConfig{Model: summaries, Keep: 2, Batch: 2})
	rt := runlet.NewRuntime(runlet.WithPreparers(s), runlet.WithStore(runlet.NewMemoryStore()))
	agentModel := runlettest.NewModel()
	agentModel.Func = func(ctx context.Context, req *runlet.ModelRequest) runlettest.Reply {
		if len(agentModel.Requests())%2 == 1 {
			return runlettest.ToolCallReply(runlettest.Call(fmt.Sprint("c", len(agentModel.Requests())), "get_weather", `{"city":"x"}`))
		}
		return runlettest.TextReply("ok")
	}
	agent := &runlet.Agent{Model: agentModel, Tools: []runlet.Tool{weatherTool()}}
	for i := range 6 {
		if _, err := rt.Run(context.Background(), agent, fmt.Sprint("turn ", i), runlet.WithSession("s")); err != nil {
			t.Fatal(err)
		}
	}
	// 6 runs of 2 model calls; summaries only when turns > keep+batch (from
	// the 5th run on), reused within a run's tool loop and extended later.
	n := len(summaries.Requests())
	if n == 0 || n > 3 {
		t.Fatalf("summariser called %d times", n)
	}
	last := agentModel.Requests()[len(agentModel.Requests())-1].Messages
	if !strings.HasPrefix(last[0].Text(), "Summary of the earlier conversation:\nsummary#") {
		t.Fatalf("first message %q", last[0].Text())
	}
	checkPairs(t, last[1:])
	if got := len(turnsOf(last)) - 1; got != 2 && got != 3 && got != 4 {
		t.Fatalf("%d verbatim turns", got)
	}
}

// summarizingRun runs an agent whose history is long enough for the
// Summarizer to call its model on the first turn.
func summarizingRun(t *testing.T, opts ...runlet.RuntimeOption) (*runlet.Result, []runlet.Event, *runlettest.Model, error) {
	t.Helper()
	summary := runlettest.TextReply("the summary")
	summary.Response.Usage = runlet.Usage{InputTokens: 100, OutputTokens: 7}
	summaries := runlettest.NewModel(summary)
	agentModel := runlettest.NewModel(runlettest.TextReply("ok"))
	var hist []runlet.Message
	for i := range 4 {
		hist = append(hist, runlet.UserText(fmt.Sprint("q", i)), runlet.AssistantText(fmt.Sprint("a", i)))
	}
	var evs []runlet.Event
	obs := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) { evs = append(evs, ev) })
	s := runlet.Summarizer(runlet.SummarizerConfig{Model: summaries, Keep: 1, Batch: 1})
	rt := runlet.NewRuntime(append([]runlet.RuntimeOption{runlet.WithPreparers(s), runlet.WithObservers(obs)}, opts...)...)
	res, err := rt.Run(context.Background(), &runlet.Agent{Model: agentModel}, "now", runlet.WithHistory(hist...))
	if len(summaries.Requests()) != 1 {
		t.Fatalf("summariser called %d times", len(summaries.Requests()))
	}
	return res, evs, agentModel, err
}

// Every model call the runtime makes is accounted for: the Summarizer's
// call is in the run's usage, split by purpose, and in labelled events.
func TestSummarizerCallsAreAccounted(t *testing.T) {
	res, evs, _, err := summarizingRun(t)
	if err != nil {
		t.Fatal(err)
	}
	agentUsage := runlet.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, Requests: 1}
	sumUsage := runlet.Usage{InputTokens: 100, OutputTokens: 7, TotalTokens: 107, Requests: 1}
	if res.Usage != agentUsage.Add(sumUsage) || res.Turns != 1 {
		t.Fatalf("usage %+v turns %d", res.Usage, res.Turns)
	}
	if res.UsageByPurpose["agent"] != agentUsage || res.UsageByPurpose["summarize"] != sumUsage {
		t.Fatalf("by purpose %+v", res.UsageByPurpose)
	}
	var purposes []string
	for _, ev := range evs {
		switch e := ev.(type) {
		case *runlet.ModelStarted:
			purposes = append(purposes, "started:"+e.Purpose)
		case *runlet.ModelFinished:
			purposes = append(purposes, "finished:"+e.Purpose)
		}
	}
	if strings.Join(purposes, " ") != "started:summarize finished:summarize started:agent finished:agent" {
		t.Fatalf("model events %v", purposes)
	}
}

// The Summarizer's calls count against the run's limits.
func TestSummarizerCallsCountAgainstLimits(t *testing.T) {
	for _, tc := range []struct {
		limits runlet.UsageLimits
		policy string
	}{
		{runlet.UsageLimits{Requests: 1}, "usage_limit:requests"},
		{runlet.UsageLimits{InputTokens: 50}, "usage_limit:input_tokens"},
	} {
		res, _, agentModel, err := summarizingRun(t, runlet.WithLimits(tc.limits))
		var pe *runlet.PolicyError
		if !errors.As(err, &pe) || pe.Policy != tc.policy {
			t.Fatalf("limits %+v: err = %v", tc.limits, err)
		}
		if len(agentModel.Requests()) != 0 || res.Usage.Requests != 1 {
			t.Fatalf("limits %+v: agent model called %d times, usage %+v", tc.limits, len(agentModel.Requests()), res.Usage)
		}
	}
}

func TestKeepLastMessages(t *testing.T) {
	// conversation(5) plus the new question: turns start at messages 0, 2,
	// 6, 8, 12 and 14 (15 messages).
	for _, tc := range []struct {
		n, kept int
	}{
		{n: 1, kept: 1},   // the newest turn only
		{n: 5, kept: 3},   // turn 4 (2 messages) fits, turn 3 (4) would not
		{n: 7, kept: 7},   // turns 3 and 4 exactly
		{n: 8, kept: 7},   // turn 2 would make 9
		{n: 15, kept: 15}, // everything fits
		{n: 0, kept: 15},  // 0 means no window
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			model, evs, err := runPrepared(t, runlet.KeepLastMessages(tc.n), conversation(5))
			if err != nil {
				t.Fatal(err)
			}
			msgs := model.Requests()[0].Messages
			checkPairs(t, msgs)
			if len(msgs) != tc.kept || msgs[len(msgs)-1].Text() != "latest question" {
				t.Fatalf("kept %d messages, want %d: %+v", len(msgs), tc.kept, msgs)
			}
			p := prepared(evs)
			if changed := tc.kept < 15; p == nil || p.Changed != changed || p.MessagesBefore != 15 || p.MessagesAfter != tc.kept {
				t.Fatalf("context.prepared = %+v", p)
			}
		})
	}
}

func TestKeepLastMessagesKeepsTheRunningTurnWhole(t *testing.T) {
	// The second model call sees the running turn: the question, the tool
	// call and its result, 3 messages, over a window of 2. It is kept
	// whole; the older turns go.
	model := runlettest.NewModel(runlettest.ToolCallReply(runlettest.Call("c1", "ping", `{}`)), runlettest.TextReply("done"))
	ping := runlet.NewTool("ping", "", func(context.Context, struct{}) (string, error) { return "pong", nil })
	_, err := runlet.NewRuntime(runlet.WithPreparers(runlet.KeepLastMessages(2))).
		Run(context.Background(), &runlet.Agent{Model: model, Tools: []runlet.Tool{ping}}, "go", runlet.WithHistory(conversation(2)...))
	if err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if got := len(reqs[0].Messages); got != 1 {
		t.Fatalf("first call: %d messages, want the question only", got)
	}
	second := reqs[1].Messages
	checkPairs(t, second)
	if len(second) != 3 || second[0].Text() != "go" {
		t.Fatalf("second call: %+v", second)
	}
}
