package httpc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/runlet/runlet"
)

// A response whose provider reported no model gets the model the call
// named, so the run counts and prices it under that model; a reported
// model is kept.
func TestCallModelFillsUnreportedModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) }))
	defer srv.Close()
	c := fastClient(0)
	ctx := context.Background()
	for reported, want := range map[string]string{"": "gpt-x", "gpt-x-2025-01-01": "gpt-x-2025-01-01"} {
		resp, err := c.Generate(ctx, Call{URL: srv.URL, Model: "gpt-x"}, func(*http.Response) (*runlet.ModelResponse, error) {
			return &runlet.ModelResponse{Model: reported}, nil
		})
		if err != nil || resp.Model != want {
			t.Errorf("generate, reported %q: model %q err %v", reported, resp.Model, err)
		}
		var done *runlet.ModelResponse
		c.Stream(ctx, Call{URL: srv.URL, Model: "gpt-x"}, func(ev runlet.StreamEvent, err error) bool {
			if err != nil {
				t.Error(err)
			}
			if ev.Kind == runlet.StreamDone {
				done = ev.Response
			}
			return true
		}, func(_ *http.Response, emit func(runlet.StreamEvent) bool) error {
			emit(runlet.StreamEvent{Kind: runlet.StreamTextDelta, Delta: "hi"})
			emit(runlet.StreamEvent{Kind: runlet.StreamDone, Response: &runlet.ModelResponse{Model: reported}})
			return nil
		})
		if done == nil || done.Model != want {
			t.Errorf("stream, reported %q: %+v", reported, done)
		}
	}
}
