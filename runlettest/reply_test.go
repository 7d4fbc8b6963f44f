package runlettest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/providers/anthropic"
	"github.com/runlet/runlet/providers/gemini"
	"github.com/runlet/runlet/providers/openai"
	"github.com/runlet/runlet/runlettest"
)

// wireCase is one fake server and the adapter that talks to it.
type wireCase struct {
	name  string
	srv   runlettest.WireServer
	model runlet.Model
}

// wireModel is the adapter for the named fake server, with the given key
// and response size limit (0: the default) and no retries.
func wireModel(name, baseURL, key string, limit int64) runlet.Model {
	switch name {
	case "chat":
		return openai.NewChatCompletions(openai.Config{BaseURL: baseURL, APIKey: key, Model: "m", MaxRetries: -1, MaxResponseBytes: limit})
	case "responses":
		return openai.NewResponses(openai.Config{BaseURL: baseURL, APIKey: key, Model: "m", MaxRetries: -1, MaxResponseBytes: limit})
	case "gemini":
		return gemini.New(gemini.Config{BaseURL: baseURL, APIKey: key, Model: "m", MaxRetries: -1, MaxResponseBytes: limit})
	}
	return anthropic.NewMessages(anthropic.Config{BaseURL: baseURL, APIKey: key, Model: "m", MaxRetries: -1, MaxResponseBytes: limit})
}

func wireCases(t *testing.T) []wireCase {
	t.Helper()
	chat := runlettest.NewOpenAIChatServer()
	resp := runlettest.NewOpenAIResponsesServer()
	anth := runlettest.NewAnthropicServer()
	gem := runlettest.NewGeminiServer()
	for _, s := range []runlettest.WireServer{chat, resp, anth, gem} {
		t.Cleanup(s.Close)
	}
	return []wireCase{
		{"chat", chat, wireModel("chat", chat.BaseURL(), "k", 0)},
		{"responses", resp, wireModel("responses", resp.BaseURL(), "k", 0)},
		{"anthropic", anth, wireModel("anthropic", anth.BaseURL(), "k", 0)},
		{"gemini", gem, wireModel("gemini", gem.BaseURL(), "k", 0)},
	}
}

// One provider-neutral script gives the same response from every fake
// server, streamed or not, with the same chunking and usage defaults.
func TestWireReplyOnEveryServer(t *testing.T) {
	reply := runlettest.WireReply{
		Text:      "The weather is fine.", // 20 runes: 5 deltas of DefaultChunkSize
		ToolCalls: []runlettest.WireToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		Usage:     &runlettest.WireUsage{InputTokens: 11, OutputTokens: 7},
	}
	for _, c := range wireCases(t) {
		t.Run(c.name, func(t *testing.T) {
			c.srv.EnqueueReplies(reply, reply)
			req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("weather?")}, Tools: []runlet.ToolSpec{{Name: "get_weather"}}}
			got, err := c.model.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			textDeltas := 0
			var streamed *runlet.ModelResponse
			for ev, err := range c.model.Stream(context.Background(), req) {
				if err != nil {
					t.Fatal(err)
				}
				switch ev.Kind {
				case runlet.StreamTextDelta:
					textDeltas++
				case runlet.StreamDone:
					streamed = ev.Response
				}
			}
			for _, r := range []*runlet.ModelResponse{got, streamed} {
				calls := r.Message.ToolCalls()
				if r.Message.Text() != reply.Text || len(calls) != 1 || calls[0].ID != "call_1" || calls[0].Name != "get_weather" ||
					string(calls[0].Arguments) != `{"city":"Paris"}` || r.FinishReason != runlet.FinishToolCalls ||
					r.Usage.InputTokens != 11 || r.Usage.OutputTokens != 7 {
					t.Errorf("response %+v", r)
				}
			}
			if textDeltas != 5 {
				t.Errorf("%d text deltas, want 5 (DefaultChunkSize)", textDeltas)
			}
		})
	}
}

// A scripted error has the same status on every server, and a reply without
// usage reports an estimate everywhere.
func TestWireReplyDefaults(t *testing.T) {
	for _, c := range wireCases(t) {
		t.Run(c.name, func(t *testing.T) {
			c.srv.SetReplyResponder(func(r runlettest.WireRequest) runlettest.WireReply {
				if len(c.srv.Requests()) == 1 {
					return runlettest.WireReply{Error: &runlettest.WireError{Type: "rate_limit_error", Message: "slow down"}}
				}
				return runlettest.WireReply{Text: "ok", Finish: runlet.FinishLength}
			})
			req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
			_, err := c.model.Generate(context.Background(), req)
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) || pe.StatusCode != 429 || pe.Message != "slow down" {
				t.Fatalf("error %v", err)
			}
			got, err := c.model.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Usage.InputTokens <= 1 || got.Usage.OutputTokens != 1 || got.FinishReason != runlet.FinishLength {
				t.Errorf("usage %+v finish %q", got.Usage, got.FinishReason)
			}
		})
	}
}

// A scripted error mid-stream arrives after ErrorAfter events on every
// server, after deltas reached the caller, so it is final.
// An ErrorAfter past the end of the stream puts the error in place of the
// terminal event, on every server: a scripted error is never lost.
func TestWireReplyStreamError(t *testing.T) {
	for _, c := range wireCases(t) {
		for _, after := range []int{7, 1000} {
			c.srv.EnqueueReplies(runlettest.WireReply{Text: "a long enough answer", ErrorAfter: after,
				Error: &runlettest.WireError{Type: "server_error", Message: "boom"}})
		}
		t.Run(c.name, func(t *testing.T) {
			for range 2 {
				req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}}
				deltas := 0
				var last error
				for ev, err := range c.model.Stream(context.Background(), req) {
					if err != nil {
						last = err
						break
					}
					if ev.Kind == runlet.StreamTextDelta {
						deltas++
					}
				}
				var pe *runlet.ProviderError
				if deltas == 0 || !errors.As(last, &pe) || pe.Message != "boom" {
					t.Fatalf("%d deltas, error %v", deltas, last)
				}
			}
		})
	}
}
