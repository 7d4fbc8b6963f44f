package openai

// Adapter-only benchmarks: a 1,000-delta streamed answer decoded by the
// Chat Completions adapter and by a hand-written minimal decoder
// (net/http + bufio + encoding/json, no framework), over the same loopback
// fake server, and the same two decoders over an in-memory stream (no HTTP,
// no server: the decoding cost alone).
//
//	go test -run '^$' -bench 'Chat(Stream|Decode)' -benchmem ./providers/openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/sse"
	"github.com/runlet/runlet/runlettest"
)

const benchDeltas = 1000

var benchAnswer = strings.Repeat("word ", benchDeltas)

func benchServer(b *testing.B) *runlettest.OpenAIChatServer {
	srv := runlettest.NewOpenAIChatServer()
	srv.SetResponder(func(runlettest.WireRequest) runlettest.OpenAIChatReply {
		return runlettest.OpenAIChatReply{Text: benchAnswer, Deltas: benchDeltas,
			Usage: &runlettest.OpenAIChatUsage{PromptTokens: 10, CompletionTokens: benchDeltas}}
	})
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkChatStreamAdapter(b *testing.B) {
	srv := benchServer(b)
	m := NewChatCompletions(Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gpt-4o-mini", HTTPClient: srv.Client()})
	req := &runlet.ModelRequest{Instructions: "Be brief.", Messages: []runlet.Message{runlet.UserText("Say word 1000 times.")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		var resp *runlet.ModelResponse
		for ev, err := range m.Stream(ctx, req) {
			if err != nil {
				b.Fatal(err)
			}
			switch ev.Kind {
			case runlet.StreamTextDelta:
				n++
			case runlet.StreamDone:
				resp = ev.Response
			}
		}
		if n != benchDeltas || len(resp.Message.Text()) != len(benchAnswer) || resp.Usage.OutputTokens != benchDeltas {
			b.Fatal("bad result", n)
		}
	}
}

// handResult is what the hand-written decoder returns.
type handResult struct {
	text   string
	deltas int
	usage  int
	finish string
}

// handStream is the least a program could do: build the request with
// encoding/json, POST it with net/http, scan lines with bufio, decode each
// chunk with encoding/json and keep the text, finish reason and usage.
func handStream(ctx context.Context, client *http.Client, url string) (handResult, error) {
	body, err := json.Marshal(map[string]any{
		"model": "gpt-4o-mini",
		"messages": []map[string]string{
			{"role": "system", "content": "Be brief."},
			{"role": "user", "content": "Say word 1000 times."},
		},
		"stream":         true,
		"stream_options": map[string]bool{"include_usage": true},
	})
	if err != nil {
		return handResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return handResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer k")
	resp, err := client.Do(req)
	if err != nil {
		return handResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return handResult{}, errors.New(resp.Status)
	}
	return handDecode(resp.Body)
}

func handDecode(r io.Reader) (handResult, error) {
	var out handResult
	var text strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			out.text = text.String()
			return out, nil
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return out, err
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				out.deltas++
			}
			if c.FinishReason != "" {
				out.finish = c.FinishReason
			}
		}
		if chunk.Usage != nil {
			out.usage = chunk.Usage.CompletionTokens
		}
	}
	if err := sc.Err(); err != nil {
		return out, err
	}
	return out, io.ErrUnexpectedEOF
}

func BenchmarkChatStreamHandwritten(b *testing.B) {
	srv := benchServer(b)
	client, url := srv.Client(), srv.BaseURL()+"/chat/completions"
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := handStream(ctx, client, url)
		if err != nil || res.deltas != benchDeltas || len(res.text) != len(benchAnswer) || res.usage != benchDeltas {
			b.Fatal(err, res.deltas)
		}
	}
}

// benchBody renders the fake server's 1,000-delta stream once.
func benchBody(b *testing.B) []byte {
	srv := benchServer(b)
	resp, err := srv.Client().Post(srv.BaseURL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkChatDecodeAdapter(b *testing.B) {
	body := benchBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d := newChatDecoder("openai", false, 0)
		rd := sse.NewReader(bytes.NewReader(body))
		n := 0
		for !d.done {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			if err := d.feed(ev); err != nil {
				b.Fatal(err)
			}
			n += len(d.events)
		}
		resp, err := d.finish()
		if err != nil || n != benchDeltas || len(resp.Message.Text()) != len(benchAnswer) {
			b.Fatal(err, n)
		}
	}
}

func BenchmarkChatDecodeHandwritten(b *testing.B) {
	body := benchBody(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := handDecode(bytes.NewReader(body))
		if err != nil || res.deltas != benchDeltas || len(res.text) != len(benchAnswer) {
			b.Fatal(err, res.deltas)
		}
	}
}

// The non-streaming path: one request with a tool and a short history, a
// tool-call answer.
func benchGenerateServer(b *testing.B) *runlettest.OpenAIChatServer {
	srv := runlettest.NewOpenAIChatServer()
	srv.SetResponder(func(runlettest.WireRequest) runlettest.OpenAIChatReply {
		return runlettest.OpenAIChatReply{
			ToolCalls: []runlettest.OpenAIChatToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Shanghai"}`}},
			Usage:     &runlettest.OpenAIChatUsage{PromptTokens: 30, CompletionTokens: 10},
		}
	})
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkChatGenerateAdapter(b *testing.B) {
	srv := benchGenerateServer(b)
	m := NewChatCompletions(Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gpt-4o-mini", HTTPClient: srv.Client()})
	req := &runlet.ModelRequest{
		Instructions: "Be brief.",
		Messages:     []runlet.Message{runlet.UserText("Weather in Shanghai?")},
		Tools:        []runlet.ToolSpec{{Name: "get_weather", Description: "Current weather for a city.", InputSchema: weatherSchema()}},
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := m.Generate(ctx, req)
		if err != nil || len(resp.Message.ToolCalls()) != 1 {
			b.Fatal(err)
		}
	}
}

func BenchmarkChatGenerateHandwritten(b *testing.B) {
	srv := benchGenerateServer(b)
	client, url := srv.Client(), srv.BaseURL()+"/chat/completions"
	tools := []map[string]any{{"type": "function", "function": map[string]any{
		"name": "get_weather", "description": "Current weather for a city.", "parameters": weatherSchema()}}}
	b.ReportAllocs()
	for b.Loop() {
		body, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "tools": tools, "messages": []map[string]string{
			{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Shanghai?"}}})
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			ID      string `json:"id"`
			Choices []struct {
				Message struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				PromptTokens, CompletionTokens int
			} `json:"usage"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || len(out.Choices[0].Message.ToolCalls) != 1 {
			b.Fatal(err)
		}
	}
}
