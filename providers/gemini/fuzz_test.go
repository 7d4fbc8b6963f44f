package gemini

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet"
)

// FuzzStreamDecoder feeds arbitrary bytes as a streamGenerateContent event
// stream, seeded with every recorded stream in testdata. The decoder must
// not panic or hang, must fail only with a *runlet.ProviderError, and when
// it finishes, its deltas must add up to the response it assembled.
func FuzzStreamDecoder(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, name := range files {
		if strings.HasSuffix(name, ".sse") || strings.HasSuffix(name, ".jsonl") {
			f.Add(streamFixture(f, filepath.Base(name)))
		}
	}
	f.Add([]byte("data: " + okChunk + "\n\n"))
	f.Add([]byte(`data: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}` + "\n\n"))
	f.Add([]byte(`data: {"promptFeedback":{"blockReason":"SAFETY"}}` + "\n\n"))
	m := newTestModel("http://unused", Config{})
	f.Fuzz(func(t *testing.T, data []byte) {
		deltas, resp, err := decodeStream(m, bytes.NewReader(data))
		if err != nil {
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if resp == nil {
			t.Fatal("no error and no response")
		}
		if joined(deltas, runlet.StreamTextDelta) != resp.Message.Text() || joined(deltas, runlet.StreamReasoningDelta) != resp.Message.Reasoning() {
			t.Fatal("deltas do not add up to the response")
		}
		calls := 0
		for _, d := range deltas {
			if d.Kind == runlet.StreamToolCallDelta {
				calls++
			}
		}
		if calls != len(resp.Message.ToolCalls()) {
			t.Fatalf("%d call deltas, %d calls", calls, len(resp.Message.ToolCalls()))
		}
	})
}
