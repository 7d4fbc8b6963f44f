package bench_test

// Time to first token: from the call that starts a streamed answer to the
// first text delta in the caller's hands, through Runlet (Runtime.Stream,
// Chat Completions adapter) and through the hand-written loop reading the
// same stream. Each op reads its whole stream (so connections are reused);
// only the time to the first delta is reported, as ttft-ns/op.
//
//	go test -run '^$' -bench TTFT -count 6 ./internal/bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

func ttftServer(b *testing.B) *runlettest.OpenAIChatServer {
	srv := runlettest.NewOpenAIChatServer()
	srv.SetResponder(func(runlettest.WireRequest) runlettest.OpenAIChatReply {
		return runlettest.OpenAIChatReply{Text: strings.Repeat("sun ", 10), Deltas: 10}
	})
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkTTFTRunlet(b *testing.B) {
	srv := ttftServer(b)
	agent := &runlet.Agent{Instructions: "Be brief.",
		Model: openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-4o-mini"})}
	rt := runlet.NewRuntime()
	var ttft time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start, got := time.Now(), false
		for ev, err := range rt.Stream(context.Background(), agent, "Weather in Shanghai?") {
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := ev.(*runlet.TextDelta); ok && !got {
				ttft += time.Since(start)
				got = true
			}
		}
		if !got {
			b.Fatal("no text delta")
		}
	}
	b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ttft-ns/op")
}

func BenchmarkTTFTHandWritten(b *testing.B) {
	srv := ttftServer(b)
	sys, user := "Be brief.", "Weather in Shanghai?"
	var ttft time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start, got := time.Now(), false
		msgs := []hMessage{{Role: "system", Content: &sys}, {Role: "user", Content: &user}}
		body, err := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs, "stream": true,
			"stream_options": map[string]any{"include_usage": true}})
		if err != nil {
			b.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, srv.BaseURL()+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok || string(data) == "[DONE]" {
				continue
			}
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(data, &chunk); err != nil {
				b.Fatal(err)
			}
			if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" && !got {
				ttft += time.Since(start)
				got = true
			}
		}
		resp.Body.Close()
		if !got {
			b.Fatal("no text delta")
		}
	}
	b.ReportMetric(float64(ttft.Nanoseconds())/float64(b.N), "ttft-ns/op")
}
