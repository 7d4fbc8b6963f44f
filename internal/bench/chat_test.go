package bench_test

// End-to-end benchmarks: the same two-call tool run (a tool call, then the
// answer) through Runlet — runtime, tool, Chat Completions adapter — and
// through a hand-written minimal loop (net/http + encoding/json + bufio, no
// framework), both against the same loopback fake server. The ratio of the
// two is Runlet's cost over the least a program could do.
//
//	go test -run '^$' -bench . -benchmem ./internal/bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

const e2eAnswerDeltas = 1000

type e2eWeather struct {
	City string `json:"city"`
}

func e2eServer(b testing.TB) *runlettest.OpenAIChatServer { return e2eServerDeltas(b, e2eAnswerDeltas) }

// e2eServerDeltas is e2eServer streaming its 4,000-byte answer in deltas
// pieces.
func e2eServerDeltas(b testing.TB, deltas int) *runlettest.OpenAIChatServer {
	srv := runlettest.NewOpenAIChatServer()
	answer := strings.Repeat("sun ", e2eAnswerDeltas)
	srv.SetResponder(func(r runlettest.WireRequest) runlettest.OpenAIChatReply {
		if bytes.Contains(r.Body, []byte(`"role":"tool"`)) {
			return runlettest.OpenAIChatReply{Text: answer, Deltas: deltas,
				Usage: &runlettest.OpenAIChatUsage{PromptTokens: 40, CompletionTokens: 1000}}
		}
		return runlettest.OpenAIChatReply{
			ToolCalls: []runlettest.OpenAIChatToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Shanghai"}`}},
			Usage:     &runlettest.OpenAIChatUsage{PromptTokens: 30, CompletionTokens: 10},
		}
	})
	b.Cleanup(srv.Close)
	return srv
}

func runletAgent(srv *runlettest.OpenAIChatServer) *runlet.Agent {
	weather := runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in e2eWeather) (string, error) {
		return "sunny in " + in.City, nil
	})
	return &runlet.Agent{
		Instructions: "Be brief.",
		Model:        openai.NewChatCompletions(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-4o-mini"}),
		Tools:        []runlet.Tool{weather},
	}
}

func BenchmarkE2ERunletGenerate(b *testing.B) {
	srv := e2eServer(b)
	agent, rt := runletAgent(srv), runlet.NewRuntime()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		res, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
		if err != nil || len(res.Output) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(res.Output))
		}
	}
}

func BenchmarkE2ERunletStream(b *testing.B) { benchRunletStream(b, e2eServer(b), e2eAnswerDeltas) }

func benchRunletStream(b *testing.B, srv *runlettest.OpenAIChatServer, deltas int) {
	agent, rt := runletAgent(srv), runlet.NewRuntime()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		n := 0
		for ev, err := range rt.Stream(context.Background(), agent, "Weather in Shanghai?") {
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := ev.(*runlet.TextDelta); ok {
				n++
			}
		}
		if n != deltas {
			b.Fatalf("%d deltas", n)
		}
	}
}

func BenchmarkE2EHandWrittenGenerate(b *testing.B) {
	srv := e2eServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := handLoop(srv.BaseURL(), false)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

func BenchmarkE2EHandWrittenStream(b *testing.B) { benchHandStream(b, e2eServer(b)) }

func benchHandStream(b *testing.B, srv *runlettest.OpenAIChatServer) {
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := handLoop(srv.BaseURL(), true)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

// The hand-written baseline: what a careful programmer writes without a
// framework for one provider, one tool, no retries and no events.

type hMessage struct {
	Role       string      `json:"role"`
	Content    *string     `json:"content"`
	ToolCalls  []hToolCall `json:"tool_calls,omitempty"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
}

type hToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

var hTools = json.RawMessage(`[{"type":"function","function":{"name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}]`)

func handLoop(base string, stream bool) (string, error) {
	sys, user := "Be brief.", "Weather in Shanghai?"
	msgs := []hMessage{{Role: "system", Content: &sys}, {Role: "user", Content: &user}}
	for turn := 0; turn < 10; turn++ {
		req := map[string]any{"model": "gpt-4o-mini", "messages": msgs, "tools": hTools}
		if stream {
			req["stream"] = true
			req["stream_options"] = map[string]any{"include_usage": true}
		}
		body, err := json.Marshal(req)
		if err != nil {
			return "", err
		}
		hr, err := http.NewRequest(http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Authorization", "Bearer test")
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return "", err
		}
		var content string
		var calls []hToolCall
		if stream {
			content, calls, err = handStream(resp)
		} else {
			var out struct {
				Choices []struct {
					Message struct {
						Content   string      `json:"content"`
						ToolCalls []hToolCall `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if err == nil && len(out.Choices) > 0 {
				content, calls = out.Choices[0].Message.Content, out.Choices[0].Message.ToolCalls
			}
		}
		if err != nil {
			return "", err
		}
		if len(calls) == 0 {
			return content, nil
		}
		msgs = append(msgs, hMessage{Role: "assistant", ToolCalls: calls})
		for _, c := range calls {
			var args e2eWeather
			if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
				return "", err
			}
			result := "sunny in " + args.City
			msgs = append(msgs, hMessage{Role: "tool", Content: &result, ToolCallID: c.ID})
		}
	}
	return "", errors.New("too many turns")
}

func handStream(resp *http.Response) (string, []hToolCall, error) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var text strings.Builder
	var calls []hToolCall
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		data := line[6:]
		if string(data) == "[DONE]" {
			return text.String(), calls, nil
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string      `json:"content"`
					ToolCalls []hToolCall `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return "", nil, err
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		d := chunk.Choices[0].Delta
		text.WriteString(d.Content)
		for _, tc := range d.ToolCalls {
			for len(calls) <= tc.Index {
				calls = append(calls, hToolCall{Type: "function"})
			}
			c := &calls[tc.Index]
			if tc.ID != "" {
				c.ID = tc.ID
			}
			if tc.Function.Name != "" {
				c.Function.Name = tc.Function.Name
			}
			c.Function.Arguments += tc.Function.Arguments
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, err
	}
	return "", nil, fmt.Errorf("stream ended before [DONE]")
}
