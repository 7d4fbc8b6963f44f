package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runlet/runlet"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testKey is the API key the tests use; it must never show in an error.
const testKey = "AIza-test-SECRET-key-0123456789"

// newTestModel returns an adapter pointed at baseURL with fast retries.
func newTestModel(baseURL string, cfg Config) *Model {
	cfg.BaseURL = baseURL
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	if cfg.Model == "" {
		cfg.Model = "gemini-3-pro-preview"
	}
	m := New(cfg)
	m.cfg.client.MinBackoff, m.cfg.client.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return m
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonlToSSE frames vercel/ai's recorded chunks (one data payload per line)
// as the event stream they were recorded from.
func jsonlToSSE(data []byte) []byte {
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteString("\r\n\r\n")
		}
	}
	return b.Bytes()
}

// streamFixture returns a recorded stream as SSE bytes.
func streamFixture(t testing.TB, name string) []byte {
	b := fixture(t, name)
	if strings.HasSuffix(name, ".jsonl") {
		return jsonlToSSE(b)
	}
	return b
}

// decodeStream runs the stream decoder over body, read through r.
func decodeStream(m *Model, r io.Reader) (deltas []runlet.StreamEvent, resp *runlet.ModelResponse, err error) {
	err = m.readStream(context.Background(), &http.Response{Body: io.NopCloser(r)}, func(ev runlet.StreamEvent) bool {
		if ev.Kind == runlet.StreamDone {
			resp = ev.Response
		} else {
			deltas = append(deltas, ev)
		}
		return true
	})
	return deltas, resp, err
}

// collect drains a stream into its deltas and final response.
func collect(t *testing.T, seq iter.Seq2[runlet.StreamEvent, error]) (deltas []runlet.StreamEvent, resp *runlet.ModelResponse, err error) {
	t.Helper()
	for ev, e := range seq {
		if e != nil {
			return deltas, resp, e
		}
		if resp != nil {
			t.Fatalf("event after StreamDone: %+v", ev)
		}
		if ev.Kind == runlet.StreamDone {
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

// joined concatenates the deltas of one kind.
func joined(deltas []runlet.StreamEvent, kind runlet.StreamEventKind) string {
	var b strings.Builder
	for _, d := range deltas {
		if d.Kind == kind {
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
	for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, "SECRET") {
			t.Fatalf("API key leaked into error: %s", s)
		}
	}
	var perr *runlet.ProviderError
	if !errors.As(err, &perr) {
		t.Fatalf("want *runlet.ProviderError, got %T: %v", err, err)
	}
	if strings.Contains(fmt.Sprintf("%#v", *perr), "SECRET") {
		t.Fatalf("API key leaked into error fields: %#v", *perr)
	}
	return perr
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

// smallReads returns the bytes of b in reads of 1 to 7 bytes.
type smallReads struct {
	b []byte
	n int
}

func (r *smallReads) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	r.n = r.n%7 + 1
	k := min(r.n, len(p), len(r.b))
	copy(p, r.b[:k])
	r.b = r.b[k:]
	return k, nil
}
