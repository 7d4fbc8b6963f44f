package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

type cityLocation struct {
	City    string `json:"city"`
	Country string `json:"country"`
}

func fixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A recorded Responses exchange (tool call, then a strict json_schema
// answer) decodes to the value, and the request runlet builds for the same
// Go type carries the same text.format the recording sent.
func TestOutputConformanceResponsesNative(t *testing.T) {
	// Replayed by a plain server: the recorded bodies, in order.
	replies := [][]byte{
		fixture(t, "output/pydantic-responses-native-output-0.response.json"),
		fixture(t, "output/pydantic-responses-native-output-1.response.json"),
	}
	var (
		mu   sync.Mutex
		sent [][]byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(sent)
		sent = append(sent, body)
		mu.Unlock()
		if n >= len(replies) {
			http.Error(w, "no reply left", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(replies[n])
	}))
	defer srv.Close()
	country := runlet.NewTool("get_user_country", "", func(context.Context, struct{}) (string, error) { return "Mexico", nil })
	agent := &runlet.Agent{
		Name:  "x",
		Model: openai.NewResponses(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "k", Model: "gpt-4o", MaxRetries: -1}),
		Tools: []runlet.Tool{country},
		OutputSchema: &runlet.OutputSchema{Name: "CityLocation", Description: "A city and its country.",
			Schema: runlet.OutputFor[cityLocation]().Schema},
	}
	res, err := runlet.RunAs[cityLocation](context.Background(), runlet.NewRuntime(), agent, "What is the largest city in the user country?", runlet.WithOutputRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value != (cityLocation{"Mexico City", "Mexico"}) || res.Usage.InputTokens != 73+92 {
		t.Fatalf("value %+v usage %+v", res.Value, res.Usage)
	}
	var recorded, ours struct {
		Text struct {
			Format any `json:"format"`
		} `json:"text"`
	}
	_ = json.Unmarshal(fixture(t, "output/pydantic-responses-native-output-1.request.json"), &recorded)
	_ = json.Unmarshal(sent[1], &ours)
	if !reflect.DeepEqual(recorded.Text.Format, ours.Text.Format) {
		t.Fatalf("text.format:\n sent     %v\n recorded %v", ours.Text.Format, recorded.Text.Format)
	}
}

// Recorded Chat Completions streams: a refusal, the first of three choices,
// an answer cut off by max_tokens; and Ollama's json_schema answer.
func TestOutputConformanceChat(t *testing.T) {
	type weather struct {
		City        string  `json:"city"`
		Temperature float64 `json:"temperature"`
		Units       string  `json:"units"`
	}
	run := func(t *testing.T, cfg openai.Config, body []byte, stream bool) (*runlet.TypedResult[weather], *runlet.TypedResult[cityLocation], error) {
		srv := runlettest.NewOpenAIChatServer()
		defer srv.Close()
		srv.EnqueueReplies(runlettest.WireReply{Body: body})
		cfg.BaseURL, cfg.APIKey = srv.BaseURL(), "k"
		agent := &runlet.Agent{Name: "x", Model: openai.NewChatCompletions(cfg)}
		opts := []runlet.RunOption{runlet.WithOutputRetries(0)}
		if strings.HasPrefix(cfg.Model, "qwen") {
			res, err := runlet.RunAs[cityLocation](context.Background(), runlet.NewRuntime(), agent, "?", opts...)
			return nil, res, err
		}
		if stream {
			res, err := runlet.StreamAs[weather](context.Background(), runlet.NewRuntime(), agent, "?", opts...).Result()
			return res, nil, err
		}
		res, err := runlet.RunAs[weather](context.Background(), runlet.NewRuntime(), agent, "?", opts...)
		return res, nil, err
	}

	_, _, err := run(t, openai.Config{Model: "gpt-4o-2024-08-06"}, fixture(t, "chat/openaipy-stream-refusal.response.sse"), true)
	var re *runlet.RefusalError
	if !errors.As(err, &re) || !strings.HasPrefix(re.Text, "I'm sorry") {
		t.Fatalf("refusal: %v", err)
	}

	res, _, err := run(t, openai.Config{Model: "gpt-4o-2024-08-06"}, fixture(t, "chat/openaipy-stream-n3-choices.response.sse"), true)
	if err != nil || res.Value != (weather{"San Francisco", 65, "f"}) {
		t.Fatalf("n=3: %+v %v", res, err)
	}

	_, _, err = run(t, openai.Config{Model: "gpt-4o-2024-08-06"}, fixture(t, "chat/openaipy-stream-finish-length.response.sse"), true)
	var oe *runlet.OutputError
	if !errors.As(err, &oe) || !strings.Contains(oe.Errors[0], "cut off") {
		t.Fatalf("length: %v", err)
	}

	_, city, err := run(t, openai.Ollama.Config("qwen3:0.6b"), fixture(t, "compatible/pydantic-ollama-nonstream-reasoning-field.response.json"), false)
	if err != nil || city.Value != (cityLocation{"Paris", "France"}) || !strings.HasPrefix(city.Reasoning, "Okay, the user") {
		t.Fatalf("ollama: %+v %v", city, err)
	}
}
