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
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// The same two-call tool run against the fake OpenAI Responses server. The
// server answers from a queue, so each iteration enqueues its two turns.

func responsesServer(b testing.TB) (*runlettest.OpenAIResponsesServer, func()) {
	srv := runlettest.NewOpenAIResponsesServer()
	srv.ChunkSize = 4 // "sun " per delta: 1,000 deltas
	b.Cleanup(srv.Close)
	answer := strings.Repeat("sun ", e2eAnswerDeltas)
	script := func() {
		srv.Enqueue(
			runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesFunctionCall("get_weather", `{"city":"Shanghai"}`)}},
			runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText(answer)}},
		)
	}
	return srv, script
}

func responsesAgent(srv *runlettest.OpenAIResponsesServer) *runlet.Agent {
	weather := runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in e2eWeather) (string, error) {
		return "sunny in " + in.City, nil
	})
	return &runlet.Agent{
		Instructions: "Be brief.",
		Model:        openai.NewResponses(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gpt-5-mini"}),
		Tools:        []runlet.Tool{weather},
	}
}

func BenchmarkE2EResponsesRunletGenerate(b *testing.B) {
	srv, script := responsesServer(b)
	agent, rt := responsesAgent(srv), runlet.NewRuntime()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		script()
		res, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
		if err != nil || len(res.Output) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(res.Output))
		}
	}
}

func BenchmarkE2EResponsesRunletStream(b *testing.B) {
	srv, script := responsesServer(b)
	agent, rt := responsesAgent(srv), runlet.NewRuntime()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		script()
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

func BenchmarkE2EResponsesHandWrittenGenerate(b *testing.B) {
	srv, script := responsesServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		script()
		out, err := responsesHandLoop(srv.BaseURL(), false)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

func BenchmarkE2EResponsesHandWrittenStream(b *testing.B) {
	srv, script := responsesServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		script()
		out, err := responsesHandLoop(srv.BaseURL(), true)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

type rItem struct {
	Type      string `json:"type"`
	Role      string `json:"role,omitempty"`
	Content   any    `json:"content,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Output    string `json:"output,omitempty"`
}

type rOutputItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

var rTools = json.RawMessage(`[{"type":"function","name":"get_weather","description":"Current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":false}]`)

func responsesHandLoop(base string, stream bool) (string, error) {
	input := []rItem{{Type: "message", Role: "user", Content: "Weather in Shanghai?"}}
	for turn := 0; turn < 10; turn++ {
		body, err := json.Marshal(map[string]any{"model": "gpt-5-mini", "instructions": "Be brief.", "input": input,
			"tools": rTools, "store": false, "stream": stream})
		if err != nil {
			return "", err
		}
		hr, _ := http.NewRequest(http.MethodPost, base+"/responses", bytes.NewReader(body))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Authorization", "Bearer test")
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return "", err
		}
		var items []rOutputItem
		var text string
		if stream {
			text, items, err = responsesHandStream(resp)
		} else {
			var out struct {
				Output []rOutputItem `json:"output"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			items = out.Output
			for _, it := range items {
				for _, c := range it.Content {
					text += c.Text
				}
			}
		}
		if err != nil {
			return "", err
		}
		var results []rItem
		for _, it := range items {
			if it.Type != "function_call" {
				continue
			}
			var args e2eWeather
			if err := json.Unmarshal([]byte(it.Arguments), &args); err != nil {
				return "", err
			}
			input = append(input, rItem{Type: "function_call", CallID: it.CallID, Name: it.Name, Arguments: it.Arguments})
			results = append(results, rItem{Type: "function_call_output", CallID: it.CallID, Output: "sunny in " + args.City})
		}
		if len(results) == 0 {
			return text, nil
		}
		input = append(input, results...)
	}
	return "", errors.New("too many turns")
}

func responsesHandStream(resp *http.Response) (string, []rOutputItem, error) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var text strings.Builder
	var items []rOutputItem
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		var ev struct {
			Type  string      `json:"type"`
			Delta string      `json:"delta"`
			Item  rOutputItem `json:"item"`
		}
		if err := json.Unmarshal(line[6:], &ev); err != nil {
			return "", nil, err
		}
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				items = append(items, ev.Item)
			}
		case "response.completed":
			return text.String(), items, nil
		}
	}
	return "", nil, errors.New("stream ended before response.completed")
}
