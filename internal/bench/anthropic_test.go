package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/runlettest"
)

// The same two-call tool run against the fake Anthropic Messages server.

func anthropicServer(b testing.TB) *runlettest.AnthropicServer {
	srv := runlettest.NewAnthropicServer()
	answer := strings.Repeat("sun ", e2eAnswerDeltas)
	srv.SetResponder(func(r runlettest.WireRequest) runlettest.AnthropicResponse {
		if bytes.Contains(r.Body, []byte(`"tool_result"`)) {
			return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText(answer)},
				ChunkSize: 4, Usage: runlettest.AnthropicUsage{InputTokens: 40, OutputTokens: 1000}}
		}
		return runlettest.AnthropicResponse{
			Content: []runlettest.AnthropicBlock{runlettest.AnthropicToolUse("toolu_1", "get_weather", `{"city":"Shanghai"}`)},
			Usage:   runlettest.AnthropicUsage{InputTokens: 30, OutputTokens: 10},
		}
	})
	b.Cleanup(srv.Close)
	return srv
}

func anthropicAgent(srv *runlettest.AnthropicServer) *runlet.Agent {
	weather := runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in e2eWeather) (string, error) {
		return "sunny in " + in.City, nil
	})
	return &runlet.Agent{
		Instructions: "Be brief.",
		Model:        anthropic.NewMessages(anthropic.Config{BaseURL: srv.URL, APIKey: "test", Model: "claude-sonnet-4-5"}),
		Tools:        []runlet.Tool{weather},
	}
}

func BenchmarkE2EAnthropicRunletGenerate(b *testing.B) {
	agent, rt := anthropicAgent(anthropicServer(b)), runlet.NewRuntime()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		res, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
		if err != nil || len(res.Output) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(res.Output))
		}
	}
}

func BenchmarkE2EAnthropicRunletStream(b *testing.B) {
	agent, rt := anthropicAgent(anthropicServer(b)), runlet.NewRuntime()
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
		if n != e2eAnswerDeltas {
			b.Fatalf("%d deltas", n)
		}
	}
}

func BenchmarkE2EAnthropicHandWrittenGenerate(b *testing.B) {
	srv := anthropicServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := anthropicHandLoop(srv.URL, false)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

func BenchmarkE2EAnthropicHandWrittenStream(b *testing.B) {
	srv := anthropicServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := anthropicHandLoop(srv.URL, true)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

type aBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type aMessage struct {
	Role    string   `json:"role"`
	Content []aBlock `json:"content"`
}

var aTools = json.RawMessage(`[{"name":"get_weather","description":"Current weather for a city.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}]`)

func anthropicHandLoop(base string, stream bool) (string, error) {
	msgs := []aMessage{{Role: "user", Content: []aBlock{{Type: "text", Text: "Weather in Shanghai?"}}}}
	for turn := 0; turn < 10; turn++ {
		body, err := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": "Be brief.",
			"messages": msgs, "tools": aTools, "stream": stream})
		if err != nil {
			return "", err
		}
		hr, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(body))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("x-api-key", "test")
		hr.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return "", err
		}
		var blocks []aBlock
		if stream {
			blocks, err = anthropicHandStream(resp)
		} else {
			var out struct {
				Content []aBlock `json:"content"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			blocks = out.Content
		}
		if err != nil {
			return "", err
		}
		var text strings.Builder
		var results []aBlock
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				text.WriteString(bl.Text)
			case "tool_use":
				var args e2eWeather
				if err := json.Unmarshal(bl.Input, &args); err != nil {
					return "", err
				}
				results = append(results, aBlock{Type: "tool_result", ToolUseID: bl.ID, Content: "sunny in " + args.City})
			}
		}
		if len(results) == 0 {
			return text.String(), nil
		}
		msgs = append(msgs, aMessage{Role: "assistant", Content: blocks}, aMessage{Role: "user", Content: results})
	}
	return "", errors.New("too many turns")
}

func anthropicHandStream(resp *http.Response) ([]aBlock, error) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var blocks []aBlock
	var texts, inputs []strings.Builder
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock aBlock `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(line[6:], &ev); err != nil {
			return nil, err
		}
		switch ev.Type {
		case "content_block_start":
			blocks = append(blocks, ev.ContentBlock)
			texts = append(texts, strings.Builder{})
			inputs = append(inputs, strings.Builder{})
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" {
				texts[ev.Index].WriteString(ev.Delta.Text)
			} else {
				inputs[ev.Index].WriteString(ev.Delta.PartialJSON)
			}
		case "message_stop":
			for i := range blocks {
				if blocks[i].Type == "text" {
					blocks[i].Text = texts[i].String()
				} else if blocks[i].Type == "tool_use" {
					blocks[i].Input = json.RawMessage(inputs[i].String())
				}
			}
			return blocks, nil
		}
	}
	return nil, errors.New("stream ended before message_stop")
}
