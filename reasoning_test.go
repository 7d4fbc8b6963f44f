package runlet_test

import (
	"context"
	"errors"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// Settings.Reasoning goes into every request: the run's fields over the
// agent's, field by field; a level that is not one fails the run before
// any model call, as an invalid request, not sent as is.
func TestReasoningSetting(t *testing.T) {
	m := runlettest.NewModel(runlettest.TextReply("ok"))
	agent := &runlet.Agent{Model: m, Settings: runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningLow, Summary: true}}}
	if _, err := runlet.NewRuntime().Run(context.Background(), agent, "hi",
		runlet.WithSettings(runlet.Settings{Reasoning: runlet.Reasoning{Effort: runlet.ReasoningHigh, BudgetTokens: 4096}})); err != nil {
		t.Fatal(err)
	}
	want := runlet.Reasoning{Effort: runlet.ReasoningHigh, BudgetTokens: 4096, Summary: true}
	if got := m.Requests()[0].Reasoning; got != want {
		t.Fatalf("request reasoning %+v, want %+v", got, want)
	}

	for _, bad := range []runlet.Reasoning{{Effort: "hihg"}, {Effort: "High"}, {BudgetTokens: -1}} {
		m := runlettest.NewModel(runlettest.TextReply("never"))
		res, err := runlet.NewRuntime().Run(context.Background(), &runlet.Agent{Name: "a", Model: m}, "hi",
			runlet.WithSettings(runlet.Settings{Reasoning: bad}))
		if !errors.Is(err, runlet.ErrInvalidRequest) || res == nil || res.Status != runlet.StateFailed {
			t.Errorf("%+v: err %v", bad, err)
		}
		if bad.Validate() == nil {
			t.Errorf("%+v: Validate accepts it", bad)
		}
		if n := len(m.Requests()); n != 0 {
			t.Errorf("%+v: %d model calls", bad, n)
		}
	}
}
