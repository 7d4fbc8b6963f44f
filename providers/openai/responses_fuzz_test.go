package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/jsonscan"
)

// FuzzResponsesDecoder feeds arbitrary bytes to the Responses event-stream
// decoder. Whatever the input, it must end (after a bounded number of
// events) with exactly one StreamDone followed by io.EOF, or with a
// *runlet.ProviderError; it must never panic or emit anything after the end.
// Seeds: the recorded streams in testdata/responses/fixtures, the seed
// corpus in testdata/fuzz/FuzzResponsesDecoder, and the cases below.
func FuzzResponsesDecoder(f *testing.F) {
	entries, err := os.ReadDir(respFixtureDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if info, err := e.Info(); err != nil || info.Size() > 64<<10 {
			continue // large inputs make mutation slow; the big one is covered by tests
		}
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".sse"):
			f.Add(respFixture(f, name))
		case strings.HasSuffix(name, ".jsonl"):
			f.Add(respJSONLToSSE(respFixture(f, name)))
		}
	}
	for _, s := range []string{
		"",
		"data: [DONE]\n\n",
		respEvAdded + "\n\n" + respEvDelta + "\n\n" + respEvDone + "\n\n" + respEvCompleted + "\n\n",
		respEvCompleted,
		respEvDelta + "\n\n" + respEvDelta,
		`data: {"type":"response.output_item.added","output_index":-5,"item":{"type":"function_call","call_id":"c","name":"f","arguments":"{"}}` + "\n\n" +
			`data: {"type":"response.function_call_arguments.delta","output_index":-5,"delta":"}"}` + "\n\n" +
			`data: {"type":"response.reasoning_summary_text.delta","output_index":-5,"summary_index":3,"delta":"x"}` + "\n\n" +
			`data: {"type":"response.completed","response":{"output":[{"type":"reasoning"},{"type":"message","content":[{"type":"refusal","refusal":"no"}]},7,null]}}`,
		`data: {"type":"response.failed","response":{"error":{"code":429,"message":"x"}}}`,
		`data: {"type":"error","error":{"code":null}}`,
		"event: response.completed\ndata: {}\n\n",
		"data: {\"type\":\"response.output_text.delta\",\"delta\":\"\\ud800\"}\r\n\r\ndata: {\"type\":\"response.incomplete\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newRespDecoder("openai", bytes.NewReader(data), 0)
		var done *runlet.ModelResponse
		limit := 4*len(data) + 16
		for i := 0; ; i++ {
			if i > limit {
				t.Fatalf("more than %d events from %d bytes", limit, len(data))
			}
			ev, err := d.next()
			if err != nil {
				if done != nil {
					if err != io.EOF {
						t.Fatalf("after StreamDone: %v", err)
					}
				} else {
					var pe *runlet.ProviderError
					if !errors.As(err, &pe) || pe.Provider != "openai" || pe.Message == "" {
						t.Fatalf("error %v (%T), want a *runlet.ProviderError", err, err)
					}
				}
				if _, again := d.next(); again != err {
					t.Fatalf("error changed: %v, then %v", err, again)
				}
				return
			}
			if done != nil {
				t.Fatalf("event %+v after StreamDone", ev)
			}
			switch ev.Kind {
			case runlet.StreamDone:
				if ev.Response == nil {
					t.Fatal("StreamDone without a response")
				}
				done = ev.Response
				for _, p := range done.Message.Parts {
					if c, ok := p.(runlet.ToolCallPart); ok && len(c.Arguments) == 0 {
						t.Fatalf("tool call without arguments: %+v", c)
					}
				}
			case runlet.StreamTextDelta, runlet.StreamReasoningDelta, runlet.StreamToolCallDelta:
			default:
				t.Fatalf("unknown event kind %d", ev.Kind)
			}
		}
	})
}

// FuzzResponsesBody feeds arbitrary bytes to the non-streamed response
// decoding: an error or a response, never a panic.
func FuzzResponsesBody(f *testing.F) {
	for _, name := range []string{
		"pydantic-nonstream-text.response.json",
		"pydantic-nonstream-function-call.response.json",
		"pydantic-nonstream-reasoning-and-function-call.response.json",
		"vercel-error-insufficient-quota.response.json",
	} {
		f.Add(respFixture(f, name))
	}
	f.Add([]byte(`{"status":"failed","error":{"code":"server_error","message":"x"}}`))
	f.Add([]byte(`{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[{"type":"message","content":7}]}`))
	// Built-in tool items and annotations (see testdata/responses/hosted).
	f.Add([]byte(`{"status":"completed","output":[{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q","sources":[{"type":"url","url":"https://a.example"}]}},` +
		`{"type":"message","id":"m","content":[{"type":"output_text","text":"Café ☕ a","annotations":[{"type":"url_citation","start_index":7,"end_index":9,"url":"https://a.example","title":"A"},{"type":"file_citation","file_id":"f","index":99}]}]}]}`))
	f.Add([]byte(`{"status":"completed","output":[{"type":"code_interpreter_call","id":"ci","code":7,"outputs":[{"type":"logs","logs":"1"}]},{"type":"file_search_call","id":"fs","queries":"x","results":[{"file_id":1}]}]}`))
	m := respModel("http://unused")
	f.Fuzz(func(t *testing.T, data []byte) {
		body := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(data))}
		resp, err := m.decodeResponse(body)
		if err != nil {
			var pe *runlet.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T)", err, err)
			}
			return
		}
		if resp == nil || resp.Message.Role != runlet.RoleAssistant || resp.FinishReason == "" {
			t.Fatalf("response %+v", resp)
		}
	})
}

// FuzzResponsesScan checks the delta-event fast path against encoding/json:
// whenever respScanEvent accepts an input, encoding/json decodes it without
// error to the same event.
func FuzzResponsesScan(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}`,
		`{"type":"response.function_call_arguments.delta","output_index":-2,"delta":"{\"a\":1}","obfuscation":"xyz"}`,
		`{"type":"response.reasoning_summary_text.delta","summary_index":3,"delta":"héllo ✓","x":{"a":[1,2.5e-3,true,false,null,"s\u00e9"]}}`,
		` { "TYPE" : "x" , "Delta":"y" } `,
		`{"type":"response.output_text.delta","output_index":1.0,"delta":"x"}`,
		`{"type":"a","ſummary_index":3}`,
		`{"type":"a","item":{}}`, `{"type":"a","item":null}`, `{"type":"a","error":{"message":"m"}}`, `{"type":"error","code":"c","message":"m\u00e9"}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":""} }`,
		`{"type":"response.output_text.delta","delta":"line\n\"q\" \ud83d\ude00 \ud83d"}`, "{\"delta\":\"\xff\"}",
		`{}`, `[]`, `{"type":"a"}x`, `{"delta":"\x01"}`, `{"delta":"a\"b"}`, `{"output_index":0123}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast respEvent
		if !respScanEvent(new(jsonscan.Scanner), data, &fast) {
			return
		}
		var slow respEvent
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("scanner accepted what encoding/json rejects (%v): %q", err, data)
		}
		if fast.Type != slow.Type || fast.Delta != slow.Delta || fast.OutputIndex != slow.OutputIndex ||
			fast.ContentIndex != slow.ContentIndex || fast.SummaryIndex != slow.SummaryIndex ||
			!bytes.Equal(fast.Item, slow.Item) || !bytes.Equal(fast.Response, slow.Response) || !bytes.Equal(fast.Code, slow.Code) ||
			fast.Message != slow.Message || slow.Error != nil {
			t.Fatalf("scanner %+v, encoding/json %+v, for %q", fast, slow, data)
		}
	})
}

// TestResponsesScanAllocs pins the fast path's cost: one allocation for a
// delta event (its text, escaped or not), none for an event whose raw
// object fits the storage the decoder keeps.
func TestResponsesScanAllocs(t *testing.T) {
	var s jsonscan.Scanner
	var ev respEvent
	for data, want := range map[string]float64{
		`{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}`: 1,
		`{"type":"response.output_text.delta","output_index":0,"delta":"a\n\"b\" \u00e9\ud83d\ude00"}`:                                               1,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":""}}`:                          0,
	} {
		b := []byte(data)
		if n := testing.AllocsPerRun(100, func() {
			ev = respEvent{Item: ev.Item[:0], Response: ev.Response[:0], Code: ev.Code[:0]}
			if !respScanEvent(&s, b, &ev) {
				t.Fatal("fast path declined")
			}
		}); n != want {
			t.Errorf("%s: %v allocations, want %v", data, n, want)
		}
	}
}
