package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testKey is the API key the tests use; it must never show in an error.
const testKey = "sk-ant-test-SECRET-key-0123456789"

// newTestModel returns an adapter pointed at baseURL with fast retries.
func newTestModel(baseURL string, cfg Config) *Messages {
	cfg.BaseURL = baseURL
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	if cfg.Model == "" {
		cfg.Model = "claude-test"
	}
	m := NewMessages(cfg)
	m.cfg.client.MinBackoff, m.cfg.client.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return m
}

// newServerModel starts a fake server with the responses and an adapter for it.
func newServerModel(t *testing.T, cfg Config, responses ...runlettest.AnthropicResponse) (*runlettest.AnthropicServer, *Messages) {
	t.Helper()
	srv := runlettest.NewAnthropicServer(responses...)
	t.Cleanup(srv.Close)
	return srv, newTestModel(srv.URL, cfg)
}

func userRequest(text string) *runlet.ModelRequest {
	return &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText(text)}}
}

// collect drains a stream into its deltas and final response.
func collect(t *testing.T, seq iter.Seq2[runlet.StreamEvent, error]) (deltas []runlet.StreamEvent, resp *runlet.ModelResponse, err error) {
	t.Helper()
	for ev, e := range seq {
		if e != nil {
			if ev != (runlet.StreamEvent{}) {
				t.Errorf("error %v came with a non-zero event %+v", e, ev)
			}
			return deltas, resp, e
		}
		if resp != nil {
			t.Fatalf("event after StreamDone: %+v", ev)
		}
		if ev.Kind == runlet.StreamDone {
			if ev.Response == nil {
				t.Fatal("StreamDone without a response")
			}
			resp = ev.Response
			continue
		}
		deltas = append(deltas, ev)
	}
	if resp == nil {
		t.Fatal("stream ended without StreamDone or error")
	}
	return deltas, resp, nil
}

// joined concatenates the deltas of one kind (and, for tool calls, index).
func joined(deltas []runlet.StreamEvent, kind runlet.StreamEventKind, index int) string {
	var b strings.Builder
	for _, d := range deltas {
		if d.Kind == kind && (kind != runlet.StreamToolCallDelta || d.Index == index) {
			b.WriteString(d.Delta)
		}
	}
	return b.String()
}

// requireProviderError checks err is a *runlet.ProviderError without the key.
func requireProviderError(t *testing.T, err error) *runlet.ProviderError {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got nil")
	}
	noSecret(t, err)
	var perr *runlet.ProviderError
	if !errors.As(err, &perr) {
		t.Fatalf("want *runlet.ProviderError, got %T: %v", err, err)
	}
	if perr.Provider != "anthropic" && perr.Provider == "" {
		t.Errorf("error without provider: %v", err)
	}
	return perr
}

// noSecret fails if the API key shows in the error, however it is printed.
func noSecret(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, testKey) || strings.Contains(s, "SECRET") {
			t.Fatalf("API key leaked into error: %s", s)
		}
	}
	var perr *runlet.ProviderError
	if errors.As(err, &perr) {
		if strings.Contains(fmt.Sprintf("%#v", *perr), "SECRET") {
			t.Fatalf("API key leaked into error fields: %#v", *perr)
		}
	}
}

// jsonEqual compares two JSON documents semantically.
func jsonEqual(t *testing.T, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want invalid JSON %q: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
