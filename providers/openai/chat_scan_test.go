package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/sse"
)

// The Chat Completions fast path (chatScanner) against encoding/json: on
// every recorded fixture, every stored fuzz input, a table of shapes, and
// fuzzed input, what the scanner accepts it decodes exactly as
// encoding/json, and the decoders give the same events, responses and
// errors either way.

func chatStrDump(s *chatStr) string { return fmt.Sprintf("%q/%x/%x", s.b, s.hi, s.lo) }

func chatUsageDump(u *chatUsage) string {
	if u == nil {
		return "nil"
	}
	return fmt.Sprintf("%+v", *u)
}

func chatExtraDump(e *chatExtraContent) string {
	if e == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", e.Google.ThoughtSignature)
}

// chatCompletionDump writes a decoded body, choice 0's tool calls given
// apart.
func chatCompletionDump(id, model string, choices []chatChoice, calls []chatRespCall, usage *chatUsage, errRaw []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "id=%q model=%q usage=%s error=%q\n", id, model, chatUsageDump(usage), errRaw)
	for i := range choices {
		ch := &choices[i]
		m := &ch.Message
		fmt.Fprintf(&b, "choice index=%d finish=%q content=%s refusal=%s rc=%s r=%s details=%q extra=%s\n", ch.Index, ch.FinishReason,
			chatStrDump(&m.Content), chatStrDump(&m.Refusal), chatStrDump(&m.ReasoningContent), chatStrDump(&m.Reasoning),
			m.ReasoningDetails, chatExtraDump(m.ExtraContent))
		cs := m.ToolCalls
		if i == 0 && calls != nil {
			cs = calls
		}
		for j := range cs {
			tc := &cs[j]
			fmt.Fprintf(&b, "  call id=%q name=%q args=%s extra=%s\n", tc.ID, tc.Function.Name, chatStrDump(&tc.Function.Arguments), chatExtraDump(tc.ExtraContent))
		}
	}
	return b.String()
}

// chatScanCompletionDump runs the fast path on body: its dump, and
// whether it accepted.
func chatScanCompletionDump(body []byte) (string, bool) {
	var (
		wire    chatCompletion
		choices [1]chatChoice
		calls   [8]chatRespCall
		usage   chatUsage
	)
	st := chatScanStore{w: &wire, choices: &choices, calls: &calls, usage: &usage}
	c := chatScanner{alias: true}
	if !c.completion(body, &st) {
		return "", false
	}
	u := &usage
	if !st.hasUsage {
		u = nil
	}
	return chatCompletionDump(wire.ID, wire.Model, choices[:st.nChoices], calls[:st.nCalls], u, nil), true
}

func chatChunkDump(h *chatChunkHead, head bool) string {
	var b strings.Builder
	if head {
		fmt.Fprintf(&b, "id=%q model=%q ", h.ID, h.Model)
	}
	c := h.chatChunk
	fmt.Fprintf(&b, "usage=%s error=%q\n", chatUsageDump(c.Usage), c.Error)
	for i := range c.Choices {
		ch := &c.Choices[i]
		d := &ch.Delta
		fmt.Fprintf(&b, "choice index=%d finish=%q content=%s refusal=%s rc=%s r=%s details=%q\n", ch.Index, ch.FinishReason,
			chatStrDump(&d.Content), chatStrDump(&d.Refusal), chatStrDump(&d.ReasoningContent), chatStrDump(&d.Reasoning), d.ReasoningDetails)
		for j := range d.ToolCalls {
			tc := &d.ToolCalls[j]
			fmt.Fprintf(&b, "  call index=%+v id=%q name=%q args=%s extra=%s\n", tc.Index, tc.ID, tc.Function.Name,
				chatStrDump(&tc.Function.Arguments), chatExtraDump(tc.ExtraContent))
		}
	}
	return b.String()
}

// chatChunkSlow decodes a chunk with encoding/json, as the decoder does
// without the fast path.
func chatChunkSlow(data []byte, head bool) (string, error) {
	h := chatChunkHead{chatChunk: &chatChunk{}}
	var j chatJSON
	var err error
	if head {
		err = j.decode(data, &h)
	} else {
		err = j.decode(data, h.chatChunk)
	}
	return chatChunkDump(&h, head), err
}

// chatChunkFast runs the fast path on each chunk in turn, reusing its
// storage as the decoder does, and returns the last chunk's dump.
func chatChunkFast(head bool, chunks ...[]byte) (string, bool) {
	var c chatScanner
	var usage chatUsage
	h := chatChunkHead{chatChunk: &chatChunk{}}
	ok := false
	for _, data := range chunks {
		h.chatChunk.reset()
		h.ID, h.Model = "", ""
		if ok = c.chunk(data, &h, head, &usage); !ok {
			// The decoder resets before encoding/json.
			h.chatChunk.reset()
		}
	}
	return chatChunkDump(&h, head), ok
}

// checkChunk compares the two paths on one chunk (after the ones before,
// for the fast path's reused storage), reporting whether the fast path
// accepted it.
func checkChunk(t testing.TB, data []byte, before ...[]byte) bool {
	t.Helper()
	accepted := false
	for _, head := range []bool{true, false} {
		fast, ok := chatChunkFast(head, append(before, data)...)
		if !ok {
			continue
		}
		accepted = true
		slow, err := chatChunkSlow(data, head)
		if err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, data)
		}
		if fast != slow {
			t.Fatalf("head %v: %q\nfast path:\n%s\nencoding/json:\n%s", head, data, fast, slow)
		}
	}
	return accepted
}

// checkCompletion compares the two paths on a body, and the decoded
// responses; it reports whether the fast path accepted it.
func checkCompletion(t testing.TB, body []byte) bool {
	t.Helper()
	for _, think := range []bool{false, true} {
		fastResp, fastErr := chatDecodeCompletion("p", body, think)
		slowResp, slowErr := chatDecodeCompletionSlow("p", body, think)
		if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) || !reflect.DeepEqual(fastResp, slowResp) {
			t.Fatalf("think %v: %q\nfast: %+v, %v\nslow: %+v, %v", think, body, fastResp, fastErr, slowResp, slowErr)
		}
	}
	fast, ok := chatScanCompletionDump(body)
	if !ok {
		return false
	}
	var w chatCompletion
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("fast path accepted what encoding/json rejects (%v): %q", err, body)
	}
	if slow := chatCompletionDump(w.ID, w.Model, w.Choices, nil, w.Usage, w.Error); fast != slow {
		t.Fatalf("%q\nfast path:\n%s\nencoding/json:\n%s", body, fast, slow)
	}
	return true
}

// chatDecodeBoth decodes a stream with and without the fast path and
// fails unless events, response and error are the same.
func chatDecodeBoth(t testing.TB, body []byte, think bool) {
	t.Helper()
	run := func(slow bool) ([]runlet.StreamEvent, *runlet.ModelResponse, error) {
		d := newChatDecoder("p", think, 0)
		d.slow = slow
		rd := sse.NewReader(bytes.NewReader(body))
		defer rd.Release()
		var events []runlet.StreamEvent
		for !d.done {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			if err := d.feed(ev); err != nil {
				return events, nil, err
			}
			events = append(events, d.events...)
		}
		resp, err := d.finish()
		return append(events, d.events...), resp, err
	}
	fe, fr, ferr := run(false)
	se, sr, serr := run(true)
	if fmt.Sprint(ferr) != fmt.Sprint(serr) || !reflect.DeepEqual(fe, se) || !reflect.DeepEqual(fr, sr) {
		t.Fatalf("think %v: %q\nfast: %+v %+v %v\nslow: %+v %+v %v", think, body, fe, fr, ferr, se, sr, serr)
	}
}

// chatSSEData returns the data of each event of a stream body.
func chatSSEData(body []byte) [][]byte {
	rd := sse.NewReader(bytes.NewReader(body))
	defer rd.Release()
	var out [][]byte
	for {
		ev, err := rd.Next()
		if err != nil {
			return out
		}
		out = append(out, bytes.Clone(ev.Data))
	}
}

// TestChatScanFixtures: every recorded body and stream chunk decodes the
// same with the fast path as with encoding/json, and the fast path reads
// the common ones itself.
func TestChatScanFixtures(t *testing.T) {
	bodies, fastBodies, chunks, fastChunks := 0, 0, 0, 0
	for _, dir := range []string{"chat", "compatible"} {
		entries, err := os.ReadDir(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := dir + "/" + e.Name()
			switch {
			case strings.HasSuffix(name, ".response.json"):
				bodies++
				if checkCompletion(t, readFixture(t, name)) {
					fastBodies++
				}
			case strings.HasSuffix(name, ".sse"), strings.HasSuffix(name, ".jsonl"):
				body := chatStreamBody(t, name)
				chatDecodeBoth(t, body, false)
				chatDecodeBoth(t, body, true)
				var before [][]byte
				for _, data := range chatSSEData(body) {
					chunks++
					if checkChunk(t, data, before...) {
						fastChunks++
					}
					// The two chunks before are enough to exercise the
					// fast path's reused storage; replaying all of them
					// made the test quadratic in the recording's length.
					if before = append(before, data); len(before) > 2 {
						before = before[len(before)-2:]
					}
				}
			}
		}
	}
	t.Logf("fast path: %d of %d bodies, %d of %d stream events", fastBodies, bodies, fastChunks, chunks)
	// The fast path must carry the common shapes: most recorded bodies
	// and chunks (the rest are errors, reasoning_details, n>1, [DONE]).
	if fastBodies*2 < bodies || fastChunks*10 < chunks*7 {
		t.Errorf("fast path took %d of %d bodies, %d of %d stream events", fastBodies, bodies, fastChunks, chunks)
	}
}

// TestChatScanFuzzCorpus: the stored FuzzChatDecoder inputs decode the
// same with and without the fast path.
func TestChatScanFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzChatDecoder")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		body, think, ok := parseFuzzStream(string(raw))
		if !ok {
			continue
		}
		n++
		chatDecodeBoth(t, body, think)
		for _, data := range chatSSEData(body) {
			checkChunk(t, data)
		}
	}
	if n < len(entries)/2 {
		t.Fatalf("read %d of %d corpus files", n, len(entries))
	}
}

// parseFuzzStream reads a "go test fuzz v1" file of ([]byte, bool).
func parseFuzzStream(s string) (body []byte, think, ok bool) {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "[]byte(") || !strings.HasPrefix(lines[2], "bool(") {
		return nil, false, false
	}
	lit := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
	str, err := strconv.Unquote(lit)
	if err != nil {
		return nil, false, false
	}
	return []byte(str), lines[2] == "bool(true)", true
}

// TestChatScanShapes: the shapes the fast path reads, and the ones it
// leaves to encoding/json, decode the same either way.
func TestChatScanShapes(t *testing.T) {
	chunks := []struct {
		name, data string
		fast       bool
	}{
		{"content", `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}`, true},
		{"role and empty content", `{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null}}]}`, true},
		{"escapes", `{"choices":[{"index":0,"delta":{"content":"line\n\"q\" \u00e9\ud83d\ude00 \ud83d"}}]}`, true},
		{"lone low surrogate first", `{"choices":[{"index":0,"delta":{"content":"\ude00x"}}]}`, true},
		{"invalid UTF-8 kept", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xe6\x9d\"}}]}", true},
		{"reasoning_content", `{"choices":[{"index":0,"delta":{"reasoning_content":"think","content":null}}]}`, true},
		{"reasoning", `{"choices":[{"index":0,"delta":{"reasoning":"think"}}]}`, true},
		{"tool call start", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`, true},
		{"tool call args", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a\":"}}]}}]}`, true},
		{"parallel calls", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`, true},
		{"call without index", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"id":"a","function":{"name":"f"}}]}}]}`, true},
		{"tool_calls null", `{"choices":[{"index":0,"delta":{"tool_calls":null}}]}`, true},
		{"extra_content null", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"extra_content":null}]}}]}`, true},
		{"finish", `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, true},
		{"finish other", `{"choices":[{"index":0,"delta":{},"finish_reason":"eos"}]}`, true},
		{"usage", `{"id":"c1","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":1,"accepted_prediction_tokens":0}}}`, true},
		{"usage deepseek", `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"prompt_cache_hit_tokens":4,"prompt_tokens_details":null}}`, true},
		{"usage top level", `{"choices":[],"usage":{"prompt_tokens":9,"cached_tokens":5,"reasoning_tokens":6}}`, true},
		{"choice 1", `{"choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"content":"y"}}]}`, true},
		{"whitespace", " { \"choices\" : [ { \"index\" : 0 , \"delta\" : { \"content\" : \"a\" } } ] }\n", true},
		{"repeated content", `{"choices":[{"index":0,"delta":{"content":"a","content":"b\n"}}]}`, true},
		{"unknown keys", `{"x":{"y":[1,2.5e3,true,null]},"choices":[{"index":0,"delta":{"content":"a","audio":{"id":"z"}},"z":1}],"obfuscation":"q"}`, true},

		{"error", `{"error":{"message":"boom","type":"server_error"}}`, false},
		{"reasoning_details", `{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"x"}]}}]}`, false},
		{"extra_content", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"extra_content":{"google":{"thought_signature":"s"}}}]}}]}`, false},
		{"repeated delta", `{"choices":[{"index":0,"delta":{"content":"a"},"delta":{"refusal":"b"}}]}`, false},
		{"repeated choices", `{"choices":[{"index":0}],"choices":[{"delta":{"content":"b"}}]}`, false},
		{"case-folded key", `{"choices":[{"index":0,"delta":{"Content":"a"}}]}`, false},
		{"case-folded top key", `{"Choices":[]}`, false},
		{"content object", `{"choices":[{"index":0,"delta":{"content":{"a":1}}}]}`, false},
		{"args object", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"a":1}}}]}}]}`, false},
		{"float index", `{"choices":[{"index":0.0,"delta":{"content":"a"}}]}`, false},
		{"string index", `{"choices":[{"index":"0","delta":{"content":"a"}}]}`, false},
		{"escaped key", `{"choices":[{"index":0,"delta":{"cont\u0065nt":"a"}}]}`, false},
		{"trailing data", `{"choices":[]} x`, false},
		{"truncated", `{"choices":[{"index":0,"delta":{"content":"a"`, false},
		{"not an object", `[1]`, false},
		{"id number", `{"id":7,"choices":[]}`, true}, // read only until the decoder has an id: skipped after
		{"escaped finish", `{"choices":[{"index":0,"delta":{},"finish_reason":"st\u006fp"}]}`, false},
	}
	for _, tc := range chunks {
		t.Run("chunk/"+tc.name, func(t *testing.T) {
			if got := checkChunk(t, []byte(tc.data)); got != tc.fast {
				t.Errorf("fast path accepted: %v, want %v", got, tc.fast)
			}
			// After a chunk that filled the reused storage.
			prev := []byte(`{"id":"c0","model":"m","choices":[{"index":0,"delta":{"content":"zz","reasoning":"r","tool_calls":[{"index":3,"id":"q","function":{"name":"n","arguments":"aa"}},{"index":4}]},"finish_reason":"length"},{"index":1}],"usage":{"prompt_tokens":1}}`)
			checkChunk(t, []byte(tc.data), prev)
			body := chatSSE(`{"id":"c0","model":"m","choices":[{"index":0,"delta":{"content":"zz"}}]}`, tc.data, chunkFinish, "[DONE]")
			chatDecodeBoth(t, body, false)
		})
	}

	bodies := []struct {
		name, data string
		fast       bool
	}{
		{"text", `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},"service_tier":"default","system_fingerprint":"fp"}`, true},
		{"tool calls", `{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"city\":\"Shanghai\"}"}},{"id":"","type":"function","function":{"name":"g","arguments":" "}}]},"finish_reason":"tool_calls"}]}`, true},
		{"refusal", `{"choices":[{"index":0,"message":{"content":null,"refusal":"I can't."},"finish_reason":"stop"}]}`, true},
		{"reasoning_content", `{"choices":[{"index":0,"message":{"reasoning_content":"hmm","content":"<think>a</think> b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"prompt_cache_hit_tokens":1}}`, true},
		{"reasoning", `{"choices":[{"index":0,"message":{"reasoning":"hmm","content":"b"},"finish_reason":"length"}]}`, true},
		{"escapes", `{"choices":[{"index":0,"message":{"content":"a\n\u00e9\ud83d\ude00 \ud83d","tool_calls":[{"id":"x","function":{"name":"f","arguments":"\ude00{}"}}]}}]}`, true},
		{"lone surrogates", `{"choices":[{"index":0,"message":{"content":"\ude00a\ud83d"}}]}`, true},
		{"usage null", `{"choices":[{"index":0,"message":{"content":"x"}}],"usage":null}`, true},
		{"extra_content null", `{"choices":[{"index":0,"message":{"content":"x","extra_content":null,"tool_calls":[{"id":"a","function":{"name":"f"},"extra_content":null}]}}]}`, true},
		{"no choices", `{"id":"x","choices":[]}`, true},
		{"choice 1 only", `{"choices":[{"index":1,"message":{"content":"x"}}]}`, true},
		{"tool_calls null", `{"choices":[{"index":0,"message":{"content":"x","tool_calls":null}}]}`, true},
		{"repeated content", `{"choices":[{"index":0,"message":{"content":"a","content":"b\n"}}]}`, true},
		{"eight calls", `{"choices":[{"index":0,"message":{"tool_calls":[{"id":"1"},{"id":"2"},{"id":"3"},{"id":"4"},{"id":"5"},{"id":"6"},{"id":"7"},{"id":"8"}]}}]}`, true},

		{"nine calls", `{"choices":[{"index":0,"message":{"tool_calls":[{"id":"1"},{"id":"2"},{"id":"3"},{"id":"4"},{"id":"5"},{"id":"6"},{"id":"7"},{"id":"8"},{"id":"9"}]}}]}`, false},
		{"two choices", `{"choices":[{"index":1,"message":{"content":"x"}},{"index":0,"message":{"content":"y"}}]}`, false},
		{"error", `{"error":{"message":"overloaded","type":"server_error","code":503}}`, false},
		{"error null", `{"error":null,"choices":[{"index":0,"message":{"content":"x"}}]}`, false},
		{"reasoning_details", `{"choices":[{"index":0,"message":{"content":"x","reasoning_details":[{"type":"reasoning.text","text":"r"}]}}]}`, false},
		{"extra_content", `{"choices":[{"index":0,"message":{"tool_calls":[{"id":"a","function":{"name":"f"},"extra_content":{"google":{"thought_signature":"s"}}}]}}]}`, false},
		{"message extra_content", `{"choices":[{"index":0,"message":{"extra_content":{"google":{"thought_signature":"s"}}}}]}`, false},
		{"repeated message", `{"choices":[{"index":0,"message":{"content":"a"},"message":{"refusal":"b"}}]}`, false},
		{"case-folded", `{"choices":[{"index":0,"Message":{"content":"a"}}]}`, false},
		{"content number", `{"choices":[{"index":0,"message":{"content":5}}]}`, false},
		{"malformed", `{"choices":[{"index":0,"message":{"content":"a"}}`, false},
		{"html", `<html>bad gateway</html>`, false},
		{"empty", ``, false},
	}
	for _, tc := range bodies {
		t.Run("body/"+tc.name, func(t *testing.T) {
			if got := checkCompletion(t, []byte(tc.data)); got != tc.fast {
				t.Errorf("fast path accepted: %v, want %v", got, tc.fast)
			}
		})
	}
}

// TestChatScanAllocs pins the fast path's cost: a streamed text chunk
// decodes without allocating (the event's text is the decoder's), and a
// non-streamed body's wire values stay on the stack.
func TestChatScanAllocs(t *testing.T) {
	var c chatScanner
	var usage chatUsage
	h := chatChunkHead{chatChunk: &chatChunk{}}
	for _, data := range []string{
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"content":"a\n\"b\" \u00e9\ud83d\ude00"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
	} {
		b := []byte(data)
		if n := testing.AllocsPerRun(100, func() {
			h.chatChunk.reset()
			if !c.chunk(b, &h, false, &usage) {
				t.Fatal("fast path declined")
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations, want 0", data, n)
		}
	}
	// A body: the response, its message's parts and their strings only.
	body := []byte(`{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := chatDecodeCompletion("p", body, false); err != nil {
			t.Fatal(err)
		}
	}); n > 7 {
		t.Errorf("%v allocations to decode a body, want at most 7", n)
	}
}

// FuzzChatScanCompletion: whatever body the fast path accepts,
// encoding/json decodes without error to the same values, and the
// responses are the same.
func FuzzChatScanCompletion(f *testing.F) {
	// Short seeds (TestChatScanFixtures covers the recorded bodies): the
	// fuzzer minimises every new input, which is slow for long ones.
	f.Add([]byte(`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`))
	f.Add([]byte(`{"choices":[{"index":0,"message":{"content":null,"reasoning_content":"r","tool_calls":[{"id":"call_1","type":"function","index":0,"function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_cache_hit_tokens":4}}`))
	f.Add([]byte(`{"choices":[{"index":0,"message":{"content":"a\n\u00e9\ud83d\ude00 \ud83d","tool_calls":[{"id":"x","function":{"name":"f","arguments":"\ude00{}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":1}}}`))
	f.Add([]byte(`{"choices":[{"index":0,"message":{"content":"a","content":"b\n"}}],"usage":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkCompletion(t, body)
	})
}

// FuzzChatScanChunk: whatever chunk the fast path accepts, after any
// other chunk in the same reused storage, encoding/json decodes without
// error to the same values.
func FuzzChatScanChunk(f *testing.F) {
	for _, name := range []string{"chat/openaipy-stream-parallel-tool-calls-usage.response.sse", "compatible/vercel-deepseek-stream-reasoning-content-tool-call.chunks.jsonl"} {
		data := chatSSEData(chatStreamBody(f, name))
		for i := 1; i < len(data); i++ {
			f.Add(data[i-1], data[i])
		}
	}
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"zz","tool_calls":[{"index":3,"id":"q"},{"index":4}]}},{"index":1}],"usage":{"prompt_tokens":1}}`),
		[]byte(`{"choices":[{"index":0,"delta":{"content":"\ud83d","tool_calls":[{"index":null,"function":{"arguments":"\ude00"}}]},"finish_reason":"stop"}]}`))
	f.Fuzz(func(t *testing.T, prev, data []byte) {
		checkChunk(t, data, prev)
	})
}
