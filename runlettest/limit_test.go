package runlettest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/runlettest"
)

// endless is a server that streams one kind of delta without end, in each
// protocol: after a preamble, the same event again and again, until the
// client goes away or the server's safe guard (serverGuard bytes) is hit.
type endless struct {
	preamble []string // SSE events, written once
	repeat   string   // SSE event, written forever
}

const (
	deltaSize   = 1 << 10
	testLimit   = 1 << 20  // the adapters' MaxResponseBytes in this test
	serverGuard = 48 << 20 // a server never writes more than this
	heapGuard   = 64 << 20 // the test stops itself past this much heap growth
)

func endlessCases() map[string]map[string]endless {
	chunk := strings.Repeat("a", deltaSize)
	chat := func(delta string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
	}
	resp := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\",\"sequence_number\":1," + rest + "}"
	}
	created := resp("response.created", `"response":{"id":"r1","object":"response","status":"in_progress","model":"m","output":[]}`)
	anth := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + rest + "}"
	}
	start := anth("message_start", `"message":{"id":"m1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`)
	gem := func(part string) string {
		return `data: {"candidates":[{"content":{"parts":[` + part + `],"role":"model"},"index":0}],"modelVersion":"m","responseId":"g1"}`
	}
	return map[string]map[string]endless{
		"gemini": {
			"text":      {nil, gem(`{"text":"` + chunk + `"}`)},
			"reasoning": {nil, gem(`{"text":"` + chunk + `","thought":true}`)},
			"arguments": {nil, gem(`{"functionCall":{"name":"f","args":{"a":"` + chunk + `"}}}`)},
		},
		"chat": {
			"text":      {nil, chat(`{"content":"` + chunk + `"}`)},
			"reasoning": {nil, chat(`{"reasoning_content":"` + chunk + `"}`)},
			"arguments": {[]string{chat(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}`)},
				chat(`{"tool_calls":[{"index":0,"function":{"arguments":"` + chunk + `"}}]}`)},
		},
		"responses": {
			"text": {[]string{created, resp("response.output_item.added", `"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}`)},
				resp("response.output_text.delta", `"output_index":0,"content_index":0,"item_id":"msg_1","delta":"`+chunk+`"`)},
			"reasoning": {[]string{created, resp("response.output_item.added", `"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}`)},
				resp("response.reasoning_summary_text.delta", `"output_index":0,"summary_index":0,"item_id":"rs_1","delta":"`+chunk+`"`)},
			"arguments": {[]string{created, resp("response.output_item.added", `"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"","status":"in_progress"}`)},
				resp("response.function_call_arguments.delta", `"output_index":0,"item_id":"fc_1","delta":"`+chunk+`"`)},
		},
		"anthropic": {
			"text": {[]string{start, anth("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`)},
				anth("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"`+chunk+`"}`)},
			"reasoning": {[]string{start, anth("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}`)},
				anth("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"`+chunk+`"}`)},
			"signature": {[]string{start, anth("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}`)},
				anth("content_block_delta", `"index":0,"delta":{"type":"signature_delta","signature":"`+chunk+`"}`)},
			"arguments": {[]string{start, anth("content_block_start", `"index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}`)},
				anth("content_block_delta", `"index":0,"delta":{"type":"input_json_delta","partial_json":"`+chunk+`"}`)},
		},
	}
}

func (e endless) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	written := 0
	for _, ev := range e.preamble {
		fmt.Fprintf(w, "%s\n\n", ev)
	}
	ev := []byte(e.repeat + "\n\n")
	for written < serverGuard && r.Context().Err() == nil {
		n, err := w.Write(ev)
		if err != nil {
			return
		}
		written += n
		fl.Flush()
	}
}

// A server that streams text, reasoning or tool arguments without end
// cannot grow the process: every adapter stops at its MaxResponseBytes with
// ErrResponseTooLarge, and the heap stays far below what the server sent.
func TestEndlessStreamStopsAtSizeLimit(t *testing.T) {
	for api, kinds := range endlessCases() {
		for kind, e := range kinds {
			t.Run(api+"/"+kind, func(t *testing.T) {
				srv := httptest.NewServer(e)
				defer srv.Close()
				model := wireModel(api, srv.URL, "k", testLimit)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				base, peak := ms.HeapAlloc, ms.HeapAlloc
				events := 0
				var got error
				for _, err := range model.Stream(ctx, &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("go on forever")}}) {
					if err != nil {
						got = err
						break
					}
					if events++; events%64 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc)
						if peak-base > heapGuard {
							break // the safe guard: stop before the machine suffers
						}
					}
				}
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
				var pe *runlet.ProviderError
				if !errors.Is(got, runlet.ErrResponseTooLarge) || !errors.As(got, &pe) || pe.Retryable {
					t.Fatalf("after %d events: err = %v", events, got)
				}
				if events > testLimit/deltaSize+2 {
					t.Errorf("%d deltas of %d bytes passed a limit of %d", events, deltaSize, testLimit)
				}
				grew := int64(peak) - int64(base)
				t.Logf("%d events, heap grew by %.1f MiB", events, float64(grew)/(1<<20))
				if grew > 16*testLimit {
					t.Errorf("heap grew by %d MiB for a %d MiB limit", grew>>20, testLimit>>20)
				}
			})
		}
	}
}

// A non-streamed body past twice the limit is refused the same way, by
// every adapter, and not retried.
func TestLargeBodyStopsAtSizeLimit(t *testing.T) {
	huge := strings.Repeat("b", 3*testLimit)
	for _, c := range wireCases(t) {
		t.Run(c.name, func(t *testing.T) {
			model := wireModel(c.name, c.srv.BaseURL(), "k", testLimit)
			c.srv.EnqueueReplies(runlettest.WireReply{Text: huge}, runlettest.WireReply{Text: "never"})
			_, err := model.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
			if !errors.Is(err, runlet.ErrResponseTooLarge) || len(c.srv.Requests()) != 1 {
				t.Errorf("err = %v, %d requests", err, len(c.srv.Requests()))
			}
		})
	}
}
