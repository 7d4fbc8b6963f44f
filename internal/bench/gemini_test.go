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
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/runlettest"
)

// The same two-call tool run against the fake Gemini API, through runlet
// and through a hand-written client that keeps the thought signature.

func geminiServer(b testing.TB) *runlettest.GeminiServer {
	srv := runlettest.NewGeminiServer()
	answer := strings.Repeat("sun ", e2eAnswerDeltas)
	srv.SetResponder(func(r runlettest.WireRequest) runlettest.GeminiResponse {
		if bytes.Contains(r.Body, []byte(`"functionResponse"`)) {
			return runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiText(answer)}, ChunkSize: 4,
				Usage: &runlettest.GeminiUsage{PromptTokens: 40, CandidatesTokens: 1000}}
		}
		return runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiCall("", "get_weather", `{"city":"Shanghai"}`)},
			Usage: &runlettest.GeminiUsage{PromptTokens: 30, CandidatesTokens: 10}}
	})
	b.Cleanup(srv.Close)
	return srv
}

func geminiAgent(srv *runlettest.GeminiServer) *runlet.Agent {
	weather := runlet.NewTool("get_weather", "Current weather for a city.", func(ctx context.Context, in e2eWeather) (string, error) {
		return "sunny in " + in.City, nil
	})
	return &runlet.Agent{
		Instructions: "Be brief.",
		Model:        gemini.New(gemini.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "gemini-3-flash-preview"}),
		Tools:        []runlet.Tool{weather},
	}
}

func BenchmarkE2EGeminiRunletGenerate(b *testing.B) {
	agent, rt := geminiAgent(geminiServer(b)), runlet.NewRuntime()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		res, err := rt.Run(context.Background(), agent, "Weather in Shanghai?")
		if err != nil || len(res.Output) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(res.Output))
		}
	}
}

func BenchmarkE2EGeminiRunletStream(b *testing.B) {
	agent, rt := geminiAgent(geminiServer(b)), runlet.NewRuntime()
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

func BenchmarkE2EGeminiHandWrittenGenerate(b *testing.B) {
	srv := geminiServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := geminiHandLoop(srv.BaseURL(), false)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

func BenchmarkE2EGeminiHandWrittenStream(b *testing.B) {
	srv := geminiServer(b)
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		out, err := geminiHandLoop(srv.BaseURL(), true)
		if err != nil || len(out) != 4*e2eAnswerDeltas {
			b.Fatal(err, len(out))
		}
	}
}

type gPart struct {
	Text             string          `json:"text,omitempty"`
	FunctionCall     *gCall          `json:"functionCall,omitempty"`
	FunctionResponse json.RawMessage `json:"functionResponse,omitempty"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
}

type gCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type gContent struct {
	Role  string  `json:"role"`
	Parts []gPart `json:"parts"`
}

var gTools = json.RawMessage(`[{"functionDeclarations":[{"name":"get_weather","description":"Current weather for a city.","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}]}]`)

func geminiHandLoop(base string, stream bool) (string, error) {
	contents := []gContent{{Role: "user", Parts: []gPart{{Text: "Weather in Shanghai?"}}}}
	for turn := 0; turn < 10; turn++ {
		body, err := json.Marshal(map[string]any{"contents": contents, "tools": gTools,
			"systemInstruction": map[string]any{"parts": []gPart{{Text: "Be brief."}}}})
		if err != nil {
			return "", err
		}
		url := base + "/models/gemini-3-flash-preview:generateContent"
		if stream {
			url = base + "/models/gemini-3-flash-preview:streamGenerateContent?alt=sse"
		}
		hr, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("x-goog-api-key", "test")
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return "", err
		}
		parts, err := geminiHandRead(resp, stream)
		if err != nil {
			return "", err
		}
		var text strings.Builder
		var results []gPart
		for _, p := range parts {
			if p.FunctionCall == nil {
				text.WriteString(p.Text)
				continue
			}
			var args e2eWeather
			if err := json.Unmarshal(p.FunctionCall.Args, &args); err != nil {
				return "", err
			}
			fr, _ := json.Marshal(map[string]any{"name": p.FunctionCall.Name, "response": map[string]string{"output": "sunny in " + args.City}})
			results = append(results, gPart{FunctionResponse: fr})
		}
		if len(results) == 0 {
			return text.String(), nil
		}
		contents = append(contents, gContent{Role: "model", Parts: parts}, gContent{Role: "user", Parts: results})
	}
	return "", errors.New("too many turns")
}

// geminiHandRead reads the parts of a response: whole, or the chunks of a
// stream, text joined, signatures kept on their parts.
func geminiHandRead(resp *http.Response, stream bool) ([]gPart, error) {
	defer resp.Body.Close()
	type chunk struct {
		Candidates []struct {
			Content gContent `json:"content"`
		} `json:"candidates"`
	}
	if !stream {
		var c chunk
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Candidates) == 0 {
			return nil, errors.Join(err, errors.New("no candidate"))
		}
		return c.Candidates[0].Content.Parts, nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var parts []gPart
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, gPart{Text: text.String()})
			text.Reset()
		}
	}
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		var c chunk
		if err := json.Unmarshal(line[6:], &c); err != nil {
			return nil, err
		}
		if len(c.Candidates) == 0 {
			continue
		}
		for _, p := range c.Candidates[0].Content.Parts {
			if p.FunctionCall != nil {
				flush()
				parts = append(parts, p)
			} else {
				text.WriteString(p.Text)
			}
		}
	}
	flush()
	return parts, sc.Err()
}
