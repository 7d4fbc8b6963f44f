package anthropic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// The benchmarks compare the adapter with a hand-written minimal decoder
// (net/http + bufio + encoding/json, no retries, no assembly beyond the
// text) on the same 1,000-delta stream: over loopback from the fake server,
// and from memory (decoder cost alone).

const benchDeltas = 1000

var benchText = strings.Repeat("token ", benchDeltas) // 6 runes a delta

func benchResponse() runlettest.AnthropicResponse {
	return runlettest.AnthropicResponse{
		Content:   []runlettest.AnthropicBlock{runlettest.AnthropicText(benchText)},
		Usage:     runlettest.AnthropicUsage{InputTokens: 10, OutputTokens: benchDeltas},
		ChunkSize: 6,
	}
}

func benchServer(b *testing.B) *runlettest.AnthropicServer {
	srv := runlettest.NewAnthropicServer()
	srv.SetResponder(func(runlettest.WireRequest) runlettest.AnthropicResponse { return benchResponse() })
	b.Cleanup(srv.Close)
	return srv
}

var benchBody = []byte(`{"model":"claude-test","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"stream":true}`)

// baselineEvent is all the minimal decoder looks at.
type baselineEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
}

// baselineDecode reads text deltas until message_stop, calling onDelta
// for each (the adapter yields each delta too).
func baselineDecode(r io.Reader, onDelta func(string)) (string, int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var text strings.Builder
	var ev baselineEvent
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return text.String(), n, err
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		ev = baselineEvent{}
		if err := json.Unmarshal(data, &ev); err != nil {
			return text.String(), n, err
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				onDelta(ev.Delta.Text)
				text.WriteString(ev.Delta.Text)
				n++
			}
		case "message_stop":
			return text.String(), n, nil
		}
	}
}

func baselineStream(ctx context.Context, url string, onDelta func(string)) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", bytes.NewReader(benchBody))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", testKey)
	req.Header.Set("Anthropic-Version", DefaultVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	return baselineDecode(resp.Body, onDelta)
}

var sink string

// cpuTime returns the process's user+system CPU time. The benchmarks report
// it per op as well (cpu-ns/op): on a loaded machine wall time varies a
// lot, CPU time much less. Server goroutines count on both sides alike.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports CPU time per op.
func loop(b *testing.B, f func()) {
	b.ReportAllocs()
	start := cpuTime()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(n), "cpu-ns/op")
}

func BenchmarkStream1000Deltas(b *testing.B) {
	b.Run("adapter", func(b *testing.B) {
		srv := benchServer(b)
		m := newTestModel(srv.URL, Config{})
		req := userRequest("x")
		ctx := context.Background()
		loop(b, func() {
			n := 0
			for ev, err := range m.Stream(ctx, req) {
				if err != nil {
					b.Fatal(err)
				}
				if ev.Kind == runlet.StreamTextDelta {
					sink = ev.Delta
					n++
				} else if ev.Kind == runlet.StreamDone && ev.Response.Message.Text() != benchText {
					b.Fatal("wrong text")
				}
			}
			if n != benchDeltas {
				b.Fatalf("%d deltas", n)
			}
		})
	})
	b.Run("baseline", func(b *testing.B) {
		srv := benchServer(b)
		ctx := context.Background()
		loop(b, func() {
			text, n, err := baselineStream(ctx, srv.URL, func(s string) { sink = s })
			if err != nil || n != benchDeltas || text != benchText {
				b.Fatalf("%d deltas, %v", n, err)
			}
		})
	})
}

// recordedStream returns the fake server's event stream for the benchmark
// response, as bytes.
func recordedStream(b *testing.B) []byte {
	srv := benchServer(b)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(benchBody))
	req.Header.Set("Anthropic-Version", DefaultVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkDecode1000Deltas(b *testing.B) {
	data := recordedStream(b)
	b.Run("adapter", func(b *testing.B) {
		m := newTestModel("http://unused", Config{})
		ctx := context.Background()
		b.SetBytes(int64(len(data)))
		loop(b, func() {
			n := 0
			var resp *runlet.ModelResponse
			err := m.readStream(ctx, &http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(data))}, func(ev runlet.StreamEvent) bool {
				if ev.Kind == runlet.StreamTextDelta {
					sink = ev.Delta
					n++
				}
				if ev.Kind == runlet.StreamDone {
					resp = ev.Response
				}
				return true
			})
			if err != nil || n != benchDeltas || resp == nil {
				b.Fatalf("%d deltas, %v", n, err)
			}
		})
	})
	b.Run("baseline", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		loop(b, func() {
			text, n, err := baselineDecode(bytes.NewReader(data), func(s string) { sink = s })
			if err != nil || n != benchDeltas || text != benchText {
				b.Fatalf("%d deltas, %v", n, err)
			}
		})
	})
}
