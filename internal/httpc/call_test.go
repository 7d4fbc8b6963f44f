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

// ErrorHeader completes an error response's *runlet.ProviderError from
// its headers (AWS names the exception in X-Amzn-ErrorType, not in the
// body), and may change whether it is retried.
func TestErrorHeaderCompletesError(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("X-Amzn-ErrorType", "ModelStreamErrorException:http://internal")
		w.WriteHeader(http.StatusFailedDependency)
		_, _ = w.Write([]byte(`{"message":"model stream failed"}`))
	}))
	defer srv.Close()
	c := fastClient(1)
	c.ErrorHeader = func(h http.Header, e *runlet.ProviderError) {
		e.Code = h.Get("X-Amzn-ErrorType")
		e.Retryable = true
	}
	_, err := c.Generate(context.Background(), Call{URL: srv.URL}, func(*http.Response) (*runlet.ModelResponse, error) { return nil, nil })
	perr, ok := err.(*runlet.ProviderError)
	if !ok || perr.Code != "ModelStreamErrorException:http://internal" || perr.Message != "model stream failed" {
		t.Fatalf("error %#v, want the header's code and the body's message", err)
	}
	if calls != 2 {
		t.Errorf("%d calls, want 2 (ErrorHeader made the 424 retryable)", calls)
	}
}
