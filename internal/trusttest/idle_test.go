package trusttest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

// A stream whose server stops sending — before its headers, or after them
// and a first event — fails after StreamIdleTimeout with a
// *runlet.ProviderError wrapping runlet.ErrStreamIncomplete, instead of
// holding the run until its context ends (without a deadline, for ever).
func TestStreamIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	silences := []struct {
		name    string
		headers bool
	}{{"before headers", false}, {"after headers", true}}
	for _, a := range adapters {
		for _, s := range silences {
			t.Run(a.name+"/"+s.name, func(t *testing.T) {
				done := make(chan struct{})
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body) // so the server sees the client go
					if s.headers {
						w.Header().Set("Content-Type", "text/event-stream")
						w.WriteHeader(http.StatusOK)
						w.Write([]byte(": hello\n\n"))
						w.(http.Flusher).Flush()
					}
					select { // silent until the client gives up
					case <-r.Context().Done():
					case <-done:
					}
				}))
				defer srv.Close()
				defer close(done)
				m := a.new(conf{BaseURL: srv.URL, APIKey: "k", Idle: idle})
				ctx := guard(t)
				start := time.Now()
				var err error
				for _, e := range m.Stream(ctx, request()) {
					if e != nil {
						err = e
					}
				}
				var pe *runlet.ProviderError
				if !errors.Is(err, runlet.ErrStreamIncomplete) || !errors.As(err, &pe) || !pe.Retryable || ctx.Err() != nil {
					t.Fatalf("after %v: err = %v, want a retryable ProviderError wrapping ErrStreamIncomplete", time.Since(start), err)
				}
			})
		}
	}
}
