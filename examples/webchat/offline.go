package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// newFakeModel starts runlettest's fake OpenAI Chat Completions server on
// loopback, scripted like a model that reasons, looks up the weather, then
// offers to save a note (the call the page approves or rejects).
func newFakeModel() *runlettest.OpenAIChatServer {
	srv := runlettest.NewOpenAIChatServer()
	var n atomic.Int64
	srv.SetReplyResponder(func(req runlettest.WireRequest) runlettest.WireReply {
		id := n.Add(1)
		var body struct {
			Messages []struct {
				Role       string          `json:"role"`
				Content    json.RawMessage `json:"content"`
				ToolCallID string          `json:"tool_call_id"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(req.Body, &body)
		if len(body.Messages) == 0 {
			return runlettest.WireReply{Text: "Hello!"}
		}
		last := body.Messages[len(body.Messages)-1]
		content := contentText(last.Content)
		switch {
		case last.Role == "tool" && strings.HasPrefix(last.ToolCallID, "call_weather"):
			return runlettest.WireReply{
				Text: "Here is the weather: " + content + ". I can save a note about it for you.",
				ToolCalls: []runlettest.WireToolCall{{
					ID: fmt.Sprintf("call_note_%d", id), Name: "save_note",
					Arguments: mustJSON(map[string]string{"text": "Weather: " + content}),
				}},
			}
		case last.Role == "tool" && strings.HasPrefix(content, "saved"):
			return runlettest.WireReply{Text: "Done: the note is saved. Anything else?"}
		case last.Role == "tool":
			return runlettest.WireReply{Text: "All right, I did not save the note."}
		}
		city := cityIn(content)
		return runlettest.WireReply{
			Reasoning: fmt.Sprintf("The user asks %q. I will look up the weather in %s with get_weather, then offer to save a note.", content, city),
			ToolCalls: []runlettest.WireToolCall{{
				ID: fmt.Sprintf("call_weather_%d", id), Name: "get_weather",
				Arguments: mustJSON(map[string]string{"city": city}),
			}},
		}
	})
	return srv
}

// contentText is a Chat Completions message's text: a string, or the
// text parts of an array.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type, Text string
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// cityIn finds a city the offline model knows in the question.
func cityIn(q string) string {
	for _, c := range []string{"London", "Tokyo", "Berlin", "New York", "Shanghai", "Paris"} {
		if strings.Contains(strings.ToLower(q), strings.ToLower(c)) {
			return c
		}
	}
	return "Paris"
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// paced is a Model that passes each streamed event on after a pause, so
// an offline answer arrives as a live one does.
type paced struct {
	runlet.Model
	pause time.Duration
}

func (p paced) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	return func(yield func(runlet.StreamEvent, error) bool) {
		t := time.NewTimer(p.pause)
		defer t.Stop()
		for ev, err := range p.Model.Stream(ctx, req) {
			if !yield(ev, err) {
				return
			}
			t.Reset(p.pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				yield(runlet.StreamEvent{}, ctx.Err())
				return
			}
		}
	}
}
