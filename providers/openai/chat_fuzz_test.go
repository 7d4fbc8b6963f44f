package openai

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/runlet/runlet"
)

// FuzzChatDecoder feeds arbitrary event streams to the chunk decoder. It
// must never panic, and it ends either with a typed error or with a
// response whose deltas add up to its message.
func FuzzChatDecoder(f *testing.F) {
	for _, dir := range []string{"chat", "compatible"} {
		entries, _ := os.ReadDir(filepath.Join("testdata", dir))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".sse") || strings.HasSuffix(e.Name(), ".jsonl") {
				body := chatStreamBody(f, dir+"/"+e.Name())
				if len(body) < 16<<10 {
					f.Add(body, false)
				}
			}
		}
	}
	f.Add(chatSSE(`{"choices":[{"index":0,"delta":{"content":"<think>a</think>b"}}]}`, chunkFinish, "[DONE]"), true)
	f.Add(chatSSE(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"\ud83d"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\ude00"}}]},"finish_reason":"tool_calls"}]}`, "[DONE]"), false)
	f.Fuzz(func(t *testing.T, body []byte, think bool) {
		events, resp, err := decodeDirect("fz", body, think)
		if err != nil {
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) || pe.Provider != "fz" {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if resp != nil {
				t.Fatal("error and response")
			}
			return
		}
		if resp == nil || resp.FinishReason == "" {
			t.Fatalf("success without a response or finish reason: %+v", resp)
		}
		var text, reasoning strings.Builder
		args := map[int]*strings.Builder{}
		for _, ev := range events {
			switch ev.Kind {
			case runlet.StreamTextDelta:
				text.WriteString(ev.Delta)
			case runlet.StreamReasoningDelta:
				reasoning.WriteString(ev.Delta)
			case runlet.StreamToolCallDelta:
				if args[ev.Index] == nil {
					args[ev.Index] = &strings.Builder{}
				}
				args[ev.Index].WriteString(ev.Delta)
			default:
				t.Fatalf("unexpected event kind %d", ev.Kind)
			}
		}
		if text.String() != resp.Message.Text() || reasoning.String() != resp.Message.Reasoning() {
			t.Fatalf("deltas do not add up: %q vs %q", text.String(), resp.Message.Text())
		}
		calls := resp.Message.ToolCalls()
		if len(calls) != len(args) {
			t.Fatalf("%d calls, %d delta streams", len(calls), len(args))
		}
		for i, c := range calls {
			want := args[i].String()
			if strings.TrimSpace(want) == "" {
				want = "{}"
			}
			if string(c.Arguments) != want || c.ID == "" {
				t.Fatalf("call %d: %+v vs deltas %q", i, c, want)
			}
		}
		if b, err := json.Marshal(resp.Message); err == nil {
			var back runlet.Message
			if json.Valid(b) && json.Unmarshal(b, &back) != nil {
				t.Fatalf("message does not round-trip: %s", b)
			}
		}
	})
}

// FuzzChatStr checks the string decoder against encoding/json, and that a
// string split anywhere (inside a UTF-8 sequence, or between the halves of
// a \u surrogate pair) joins back exactly.
func FuzzChatStr(f *testing.F) {
	for _, s := range []string{"", "hello", "Héllo 😀 東京", `quote " back \ slash`, "\x00\x1f\t\n", "\xff\xfe", "a\u2028b"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		// Round trip through encoding/json.
		lit, _ := json.Marshal(s)
		var cs chatStr
		if err := cs.UnmarshalJSON(lit); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		var want string
		_ = json.Unmarshal(lit, &want)
		if got := string(chatFixSurrogates(&cs)); got != want {
			t.Fatalf("%s: got %q, want %q", lit, got, want)
		}
		if !utf8.ValidString(s) {
			return
		}
		// Raw bytes split anywhere join back.
		k := int(cut) % (len(s) + 1)
		if got := joinFragments(t, rawLiteral(s[:k]), rawLiteral(s[k:])); got != s {
			t.Fatalf("raw split at %d of %q: got %q", k, s, got)
		}
		// \u escapes split between any two UTF-16 units join back.
		units := utf16.Encode([]rune(s))
		k = int(cut) % (len(units) + 1)
		if got := joinFragments(t, escapedLiteral(units[:k]), escapedLiteral(units[k:])); got != s {
			t.Fatalf("escaped split at unit %d of %q: got %q", k, s, got)
		}
	})
}

// rawLiteral quotes s for JSON, leaving bytes >= 0x80 raw (valid or not).
func rawLiteral(s string) []byte {
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// escapedLiteral writes UTF-16 units as a JSON string of \u escapes.
func escapedLiteral(units []uint16) []byte {
	const hex = "0123456789abcdef"
	b := []byte{'"'}
	for _, u := range units {
		b = append(b, '\\', 'u', hex[u>>12], hex[u>>8&15], hex[u>>4&15], hex[u&15])
	}
	return append(b, '"')
}

func joinFragments(t *testing.T, lits ...[]byte) string {
	var c chatCarry
	var out, scratch []byte
	var s chatStr
	for _, lit := range lits {
		if err := s.UnmarshalJSON(lit); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		out = append(out, c.text(&s, &scratch)...)
	}
	return string(out) + c.flush()
}

// TestChatStrAllocs: a string field decodes into its reused buffer without
// allocating, escapes and split surrogates included.
func TestChatStrAllocs(t *testing.T) {
	var s chatStr
	for _, lit := range [][]byte{[]byte(`"plain text"`), []byte(`"line\n\"q\" \u00e9\ud83d\ude00 \ud83d"`)} {
		_ = s.UnmarshalJSON(lit)
		if n := testing.AllocsPerRun(100, func() {
			if err := s.UnmarshalJSON(lit); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations, want 0", lit, n)
		}
	}
}
