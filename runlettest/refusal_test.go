package runlettest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// WireRefusal looks on each fake server as a refusal looks on the real
// wire, so each adapter reads it as it would a real one: OpenAI's refusal
// field (Chat) and refusal part (Responses) become FinishRefusal with the
// refusal as the text; Anthropic's stop_reason "refusal" (with
// stop_details) becomes FinishRefusal; Gemini has no refusal signal, so
// the text arrives as an ordinary answer. Streamed or not.
func TestWireRefusalOnEveryServer(t *testing.T) {
	const no = "I can't help with that."
	want := map[string]struct {
		finish runlet.FinishReason
		text   string
	}{
		"chat":      {runlet.FinishRefusal, no},
		"responses": {runlet.FinishRefusal, no},
		"anthropic": {runlet.FinishRefusal, ""},
		"gemini":    {runlet.FinishStop, no},
	}
	for _, c := range wireCases(t) {
		t.Run(c.name, func(t *testing.T) {
			c.srv.EnqueueReplies(runlettest.WireRefusal(no), runlettest.WireRefusal(no))
			req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("do something bad")}}
			got, err := c.model.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var streamed *runlet.ModelResponse
			for ev, err := range c.model.Stream(context.Background(), req) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Kind == runlet.StreamDone {
					streamed = ev.Response
				}
			}
			w := want[c.name]
			for _, r := range []*runlet.ModelResponse{got, streamed} {
				if r == nil || r.FinishReason != w.finish || r.Message.Text() != w.text {
					t.Errorf("response %+v, want finish %q text %q", r, w.finish, w.text)
				}
			}
		})
	}
}

// What the servers send for a refusal, byte for byte where the protocol
// names it: Anthropic's stop_details on the message and on message_delta.
func TestAnthropicRefusalWire(t *testing.T) {
	srv := runlettest.NewAnthropicServer()
	defer srv.Close()
	srv.EnqueueReplies(runlettest.WireRefusal("declined: cyber"), runlettest.WireRefusal("declined: cyber"))
	for _, stream := range []bool{false, true} {
		body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}]` + map[bool]string{true: `,"stream":true}`, false: `}`}[stream]
		out := postBody(t, srv.URL+"/v1/messages", body)
		for _, w := range []string{`"stop_reason":"refusal"`, `"stop_details":{"type":"refusal","category":null,"explanation":"declined: cyber"}`} {
			if !strings.Contains(out, w) {
				t.Errorf("stream %v: %s lacks %s", stream, out, w)
			}
		}
		if strings.Contains(out, `"type":"text"`) {
			t.Errorf("stream %v: a refusal has no text of its own: %s", stream, out)
		}
	}
}

// A reply with reasoning and no usage reports reasoning tokens on every
// server whose protocol counts them: the fake Gemini server sent thoughts
// with no thoughtsTokenCount, the Responses server reasoning with
// reasoning_tokens 0.
func TestWireReasoningTokens(t *testing.T) {
	for _, c := range wireCases(t) {
		t.Run(c.name, func(t *testing.T) {
			reply := runlettest.WireReply{Reasoning: "Let me think about the weather in Paris.", ReasoningSignature: "sig", Text: "Fine."}
			c.srv.EnqueueReplies(reply, reply)
			req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("weather?")}}
			got, err := c.model.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var streamed *runlet.ModelResponse
			for ev, err := range c.model.Stream(context.Background(), req) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Kind == runlet.StreamDone {
					streamed = ev.Response
				}
			}
			for _, r := range []*runlet.ModelResponse{got, streamed} {
				if r.Message.Reasoning() == "" {
					t.Errorf("no reasoning: %+v", r.Message)
				}
				switch c.name {
				case "anthropic": // the API counts thinking in output_tokens only
					if r.Usage.ReasoningTokens != 0 {
						t.Errorf("usage %+v", r.Usage)
					}
				default:
					if r.Usage.ReasoningTokens == 0 || r.Usage.OutputTokens <= r.Usage.ReasoningTokens {
						t.Errorf("usage %+v: want reasoning tokens, within output tokens", r.Usage)
					}
				}
			}
		})
	}
}

// postBody posts a JSON body, as Anthropic's API wants it, and returns
// the answer's body.
func postBody(t *testing.T, url, body string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
