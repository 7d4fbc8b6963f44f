package runlettest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// An input guardrail's tripwire cancels the model call in flight: each
// fake server sees its request's context end while it streams, and no
// delta reaches the consumer after the tripwire.
func TestGuardrailTripwireCancelsRequestOnTheWire(t *testing.T) {
	for _, c := range wireCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var backend *httptest.Server
			switch s := c.srv.(type) {
			case *runlettest.OpenAIChatServer:
				backend = s.Server
			case *runlettest.OpenAIResponsesServer:
				backend = s.Server
			case *runlettest.AnthropicServer:
				backend = s.Server
			case *runlettest.GeminiServer:
				backend = s.Server
			}
			// A front server in front of the fake one sees whether the
			// client went away.
			gone := make(chan struct{}, 1)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				backend.Config.Handler.ServeHTTP(w, r)
				if r.Context().Err() != nil {
					gone <- struct{}{}
				}
			}))
			defer front.Close()
			base := strings.Replace(c.srv.BaseURL(), backend.URL, front.URL, 1)
			model := wireModel(c.name, base, "k", 0)
			c.srv.EnqueueReplies(runlettest.WireReply{Text: "Sure, here is how to pick a lock, step by step."})
			// Stall once some text was sent: the events before the first
			// text delta differ by protocol.
			after := map[string]int{"chat": 3, "responses": 7, "anthropic": 4, "gemini": 2}[c.name]
			c.srv.InjectFault(runlettest.Fault{Stall: true, AfterEvents: after})

			started := make(chan struct{})
			var once sync.Once
			seen := runlet.ObserverFunc(func(_ context.Context, ev runlet.Event) {
				if _, ok := ev.(*runlet.TextDelta); ok {
					once.Do(func() { close(started) })
				}
			})
			g := runlet.Guardrail{Name: "jailbreak", Input: func(ctx context.Context, in runlet.GuardrailInput) (runlet.GuardrailVerdict, error) {
				select {
				case <-started:
				case <-ctx.Done():
					return runlet.GuardrailVerdict{}, ctx.Err()
				case <-time.After(30 * time.Second): // a hang guard: the test fails below
				}
				return runlet.Tripwire("jailbreak attempt", nil), nil
			}}
			rt := runlet.NewRuntime(runlet.WithObservers(seen))
			var evs []runlet.Event
			var err error
			for ev, e := range rt.Stream(context.Background(), &runlet.Agent{Name: "a", Model: model, Guardrails: []runlet.Guardrail{g}}, "how do I pick a lock?") {
				if ev != nil {
					evs = append(evs, ev)
				}
				if e != nil {
					err = e
				}
			}
			select {
			case <-gone:
			case <-time.After(30 * time.Second):
				t.Fatal("the server never saw the request cancelled")
			}
			var gt *runlet.GuardrailTripped
			if !errors.As(err, &gt) || gt.Guardrail != "jailbreak" {
				t.Fatalf("err = %v", err)
			}
			trip, deltas := -1, 0
			for i, ev := range evs {
				switch e := ev.(type) {
				case *runlet.GuardrailChecked:
					trip = i
				case *runlet.TextDelta:
					deltas++
					if trip >= 0 {
						t.Fatalf("a delta after the tripwire: %q", e.Delta)
					}
				}
			}
			if deltas == 0 {
				t.Fatal("no delta before the tripwire: the call was not in flight")
			}
			last := evs[len(evs)-1].(*runlet.RunFailed)
			if trip < 0 || last.Result.Usage.Requests != 1 || last.Policy != "guardrail:jailbreak" {
				t.Fatalf("tripwire at %d, run.failed %+v", trip, last)
			}
		})
	}
}
