package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/sse"
)

// reasoning_details as OpenRouter documents it (reasoning tokens,
// "preserving reasoning blocks"): reasoning.text with text, signature,
// id, format and index; reasoning.encrypted with data; reasoning.summary
// with summary. No recorded response with a permissive license was found,
// so these bodies follow the documented shape.
const detailsArray = `[{"type":"reasoning.summary","summary":"Plan: ","id":null,"format":"anthropic-claude-v1","index":0},` +
	`{"type":"reasoning.text","text":"2+2 is 4 — ü","signature":"EqQB+/x==","id":null,"format":"anthropic-claude-v1","index":1},` +
	`{"type":"reasoning.encrypted","data":"gAAAAB+/==","id":"rs_1","format":"openai-responses-v1","index":2}]`

func detailsCompletion(reasoning string) []byte {
	r := ""
	if reasoning != "" {
		r = `"reasoning":` + strconvQuote(reasoning) + `,`
	}
	return []byte(`{"id":"gen-1","model":"anthropic/claude-sonnet-4","choices":[{"index":0,"message":{"role":"assistant","content":"4",` +
		r + `"reasoning_details":` + detailsArray + `},"finish_reason":"stop"}]}`)
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestChatReasoningDetailsDecoded(t *testing.T) {
	for _, tc := range []struct {
		name, reasoning, want string
	}{
		{"details only", "", "Plan: 2+2 is 4 — ü"},
		{"with plain reasoning", "thinking", "thinking"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := chatDecodeCompletion("openrouter", detailsCompletion(tc.reasoning), false)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := resp.Message.Parts[0].(runlet.ReasoningPart)
			if !ok || r.Text != tc.want || r.Details != detailsArray || r.Provider != "openrouter" {
				t.Fatalf("part %+v", resp.Message.Parts[0])
			}
			if resp.Message.Text() != "4" {
				t.Errorf("text %q", resp.Message.Text())
			}
		})
	}
}

func TestChatReasoningDetailsSentBackToSameAdapterOnly(t *testing.T) {
	resp, err := chatDecodeCompletion("openrouter", detailsCompletion(""), false)
	if err != nil {
		t.Fatal(err)
	}
	// Kept through a checkpoint (the message's JSON form).
	raw, err := json.Marshal(resp.Message)
	if err != nil {
		t.Fatal(err)
	}
	var kept runlet.Message
	if err := json.Unmarshal(raw, &kept); err != nil {
		t.Fatal(err)
	}
	next := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("2+2?"), kept, runlet.UserText("sure?")}}
	same := NewChatCompletions(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "m", Name: "openrouter"})
	b, err := same.buildRequest(next, false)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Role             string          `json:"role"`
			ReasoningDetails json.RawMessage `json:"reasoning_details"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b.body, &body); err != nil {
		t.Fatal(err)
	}
	if got := string(body.Messages[1].ReasoningDetails); got != detailsArray {
		t.Errorf("sent reasoning_details\n%s\nwant\n%s", got, detailsArray)
	}
	if strings.Count(string(b.body), "reasoning_details") != 1 {
		t.Errorf("body %s", b.body)
	}
	other := NewChatCompletions(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "m", Name: "other"})
	b, err = other.buildRequest(next, false)
	if err != nil || strings.Contains(string(b.body), "reasoning_details") || strings.Contains(string(b.body), "EqQB") {
		t.Errorf("foreign reasoning_details sent: %v %s", err, b.body)
	}
}

// detailsChunks streams the entries of detailsArray in pieces of n bytes
// of text, the way OpenRouter streams them: fragments with the entry's
// index, the signature in the entry's last fragment.
func detailsChunks(n int, plain bool) []string {
	frag := func(entry string) string {
		d := `"reasoning_details":[` + entry + `]`
		return `{"id":"gen-1","model":"m","choices":[{"index":0,"delta":{` + d + `}}]}`
	}
	var out []string
	piece := func(s string, f func(p string) string) {
		for len(s) > 0 {
			k := min(n, len(s))
			for k < len(s) && !utf8Start(s[k]) {
				k++
			}
			out = append(out, f(s[:k]))
			s = s[k:]
		}
	}
	piece("Plan: ", func(p string) string {
		return frag(`{"type":"reasoning.summary","summary":` + strconvQuote(p) + `,"id":null,"format":"anthropic-claude-v1","index":0}`)
	})
	piece("2+2 is 4 — ü", func(p string) string {
		c := frag(`{"type":"reasoning.text","text":` + strconvQuote(p) + `,"id":null,"format":"anthropic-claude-v1","index":1}`)
		if plain {
			c = strings.Replace(c, `"delta":{`, `"delta":{"reasoning":`+strconvQuote(p)+`,`, 1)
		}
		return c
	})
	out = append(out,
		frag(`{"type":"reasoning.text","text":"","signature":"EqQB+/x==","id":null,"format":"anthropic-claude-v1","index":1}`),
		frag(`{"type":"reasoning.encrypted","data":"gAAAAB+/==","id":"rs_1","format":"openai-responses-v1","index":2}`),
		`{"id":"gen-1","model":"m","choices":[{"index":0,"delta":{"content":"4"},"finish_reason":"stop"}]}`, "[DONE]")
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func feedAll(t *testing.T, chunks []string) ([]runlet.StreamEvent, *runlet.ModelResponse, error) {
	t.Helper()
	d := newChatDecoder("openrouter", false, 0)
	var events []runlet.StreamEvent
	for _, c := range chunks {
		if err := d.feed(sse.Event{Data: []byte(c)}); err != nil {
			return nil, nil, err
		}
		events = append(events, d.events...)
	}
	resp, err := d.finish()
	return append(events, d.events...), resp, err
}

func TestChatReasoningDetailsStreamed(t *testing.T) {
	// The merged entries, keys in a fixed order (type first, then sorted).
	const want = `[{"type":"reasoning.summary","format":"anthropic-claude-v1","id":null,"index":0,"summary":"Plan: "},` +
		`{"type":"reasoning.text","format":"anthropic-claude-v1","id":null,"index":1,"signature":"EqQB+/x==","text":"2+2 is 4 — ü"},` +
		`{"type":"reasoning.encrypted","data":"gAAAAB+/==","format":"openai-responses-v1","id":"rs_1","index":2}]`
	for _, plain := range []bool{false, true} {
		for _, n := range []int{1, 2, 3, 100} {
			t.Run(fmt.Sprintf("plain=%v/size%d", plain, n), func(t *testing.T) {
				events, resp, err := feedAll(t, detailsChunks(n, plain))
				if err != nil {
					t.Fatal(err)
				}
				// With plain reasoning alongside, the text is not doubled.
				const wantText = "Plan: 2+2 is 4 — ü"
				var deltas strings.Builder
				for _, ev := range events {
					if ev.Kind == runlet.StreamReasoningDelta {
						deltas.WriteString(ev.Delta)
					}
				}
				if deltas.String() != wantText {
					t.Errorf("reasoning deltas %q", deltas.String())
				}
				r, ok := resp.Message.Parts[0].(runlet.ReasoningPart)
				if !ok || r.Text != wantText || r.Details != want || r.Provider != "openrouter" || resp.Message.Text() != "4" {
					t.Fatalf("parts %+v", resp.Message.Parts)
				}
			})
		}
	}
}

func TestChatReasoningDetailsOdd(t *testing.T) {
	odd := []string{`null`, `{}`, `"x"`, `[]`, `[1,"a",null,[],{"type":5},{"type":"reasoning.text","text":7}]`,
		`[{"index":"x","text":"a"},{"index":"x","text":"b"},{"index":{"a":1}},{"type":"reasoning.text","index":0,"text":null}]`}
	for _, o := range odd {
		t.Run(o, func(t *testing.T) {
			body := `{"id":"c","model":"m","choices":[{"index":0,"message":{"content":"ok","reasoning_details":` + o + `},"finish_reason":"stop"}]}`
			if _, err := chatDecodeCompletion("openrouter", []byte(body), false); err != nil {
				t.Errorf("non-streamed: %v", err)
			}
			chunks := []string{
				`{"id":"c","model":"m","choices":[{"index":0,"delta":{"reasoning_details":` + o + `}}]}`,
				`{"id":"c","model":"m","choices":[{"index":0,"delta":{"reasoning_details":` + o + `,"content":"ok"},"finish_reason":"stop"}]}`, "[DONE]"}
			_, resp, err := feedAll(t, chunks)
			if err != nil {
				t.Fatalf("streamed: %v", err)
			}
			// Whatever was kept goes back as a valid array.
			next := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("q"), resp.Message}}
			m := NewChatCompletions(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "m", Name: "openrouter"})
			b, err := m.buildRequest(next, false)
			if err != nil || !json.Valid(b.body) {
				t.Errorf("next request: %v %s", err, b.body)
			}
		})
	}
}

func TestChatJoinDetails(t *testing.T) {
	got := string(chatJoinDetails([]string{`[{"a":1}]`, `[ ]`, `[{"b":2}, {"c":3}]`}))
	if got != `[{"a":1},{"b":2}, {"c":3}]` {
		t.Errorf("joined %s", got)
	}
}

// The recorded OpenRouter stream (testdata/compatible/PROVENANCE.md):
// reasoning.text fragments with index 0, the signature in the last one,
// plain "reasoning" alongside.
func TestChatReasoningDetailsRecordedStream(t *testing.T) {
	body := readFixture(t, "compatible/pydantic-openrouter-stream-reasoning-details.response.sse")
	i := strings.Index(string(body), `"signature":"Et0B`)
	if i < 0 {
		t.Fatal("fixture has no signature")
	}
	sig := string(body[i+len(`"signature":"`):])
	sig = sig[:strings.IndexByte(sig, '"')]
	want := `[{"type":"reasoning.text","format":"anthropic-claude-v1","index":0,"signature":"` + sig +
		`","text":"This is a simple arithmetic question. 2+2 equals 4."}]`
	_, resp, err := decodeDirect("openrouter", body, false)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := resp.Message.Parts[0].(runlet.ReasoningPart)
	if !ok || r.Details != want || r.Text != "This is a simple arithmetic question. 2+2 equals 4." {
		t.Fatalf("part %+v\nwant details %s", resp.Message.Parts[0], want)
	}
}

// The recorded OpenRouter answer (testdata/compatible/PROVENANCE.md): the
// array is kept byte for byte and goes back on the next request, with the
// entries pydantic-ai sent back in the recorded next request.
func TestChatReasoningDetailsRecordedCompletion(t *testing.T) {
	body := readFixture(t, "compatible/pydantic-openrouter-nonstream-reasoning-details.response.json")
	var rec struct {
		Choices []struct {
			Message struct {
				Reasoning        string          `json:"reasoning"`
				ReasoningDetails json.RawMessage `json:"reasoning_details"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		t.Fatal(err)
	}
	want := string(rec.Choices[0].Message.ReasoningDetails)
	resp, err := chatDecodeCompletion("openrouter", body, false)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := resp.Message.Parts[0].(runlet.ReasoningPart)
	if !ok || r.Details != want || r.Text != rec.Choices[0].Message.Reasoning || r.Text == "" {
		t.Fatalf("part %+v", resp.Message.Parts[0])
	}
	m := NewChatCompletions(Config{BaseURL: "http://127.0.0.1:1", APIKey: "k", Model: "openai/gpt-5-mini", Name: "openrouter"})
	b, err := m.buildRequest(&runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("Hello!"), resp.Message,
		runlet.UserText("What was the impact of Voltaire's writings on modern french culture?")}}, false)
	if err != nil {
		t.Fatal(err)
	}
	type entries struct {
		Messages []struct {
			ReasoningDetails []struct {
				Type, Summary, Data string
			} `json:"reasoning_details"`
		} `json:"messages"`
	}
	var sent, recorded entries
	if err := json.Unmarshal(b.body, &sent); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(readFixture(t, "compatible/pydantic-openrouter-nonstream-reasoning-details.next-request.json"), &recorded); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b.body), `"reasoning_details":`+want+`}`) {
		t.Errorf("the array is not sent unchanged: %s", b.body)
	}
	got, rw := sent.Messages[1].ReasoningDetails, recorded.Messages[1].ReasoningDetails
	if len(got) != 2 || len(rw) != 2 {
		t.Fatalf("entries %+v / recorded %+v", got, rw)
	}
	for i := range got {
		if got[i].Type != rw[i].Type || got[i].Summary != rw[i].Summary || got[i].Data != rw[i].Data {
			t.Errorf("entry %d: %+v, recorded %+v", i, got[i], rw[i])
		}
	}
}
