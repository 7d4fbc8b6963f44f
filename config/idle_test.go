package config_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
)

// TestStreamIdleTimeout: model.stream_idle_timeout reaches every
// provider's adapter: a loopback server that answers nothing ends the
// stream with ErrStreamIncomplete after the configured 100ms, where the
// default would wait 10 minutes (the test's 30 s guard).
func TestStreamIdleTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // silent until the client gives up or the test ends
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	for _, p := range config.Providers() {
		t.Run(p, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			yaml := "model: {provider: " + p + ", name: m, api_key: k-1234567, base_url: '" + srv.URL + "', max_retries: 0, stream_idle_timeout: 100ms}\n"
			l := &config.Loader{}
			f, err := l.Decode("idle.yaml", []byte(yaml))
			if err != nil {
				t.Fatal(err)
			}
			if f.Model.StreamIdleTimeout != 100*time.Millisecond {
				t.Fatalf("StreamIdleTimeout = %v", f.Model.StreamIdleTimeout)
			}
			s, err := l.Build(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, err = range s.Agent.Model.Stream(ctx, &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}) {
				if err != nil {
					break
				}
			}
			if !errors.Is(err, runlet.ErrStreamIncomplete) || ctx.Err() != nil {
				t.Fatalf("err = %v (guard: %v), want ErrStreamIncomplete from the idle timeout", err, ctx.Err())
			}
		})
	}
}

// A negative stream_idle_timeout is refused with its place in the file.
func TestStreamIdleTimeoutNegative(t *testing.T) {
	_, err := (&config.Loader{}).Decode("idle.yaml", []byte("model: {provider: openai, name: m, stream_idle_timeout: -1s}\n"))
	if err == nil || !strings.Contains(err.Error(), "idle.yaml:1") {
		t.Fatalf("err = %v, want a refusal at idle.yaml:1", err)
	}
}
