package trusttest

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/runlet/runlet"
)

// maxTinyParts is where the fake servers of TestManyTinyPartsBoundedMemory
// stop sending parts: a regression decodes this many (about 65 MiB of heap
// before the fix) and fails the test instead of growing without end.
const maxTinyParts = 100_000

// tinyWire is how an adapter's API sends many tiny parts: a response body
// (head, part repeated, tail; sep between parts), or a stream (head event
// data, then events of perEvent parts each, then the tail events).
type tinyWire struct {
	head, part, sep, tail string
	// stream: every part is its own event when perEvent is 0, else events
	// hold perEvent parts between open and close; part may hold %d, replaced
	// by the part's number.
	perEvent    int
	open, close string
}

// tinyWires are, per adapter row and mode, the smallest parts each API
// has: tool calls with a one-byte name (and no arguments), and text and
// reasoning that alternate, one byte each, so that every one is a new part.
func tinyWires(adapter string, stream bool, kind string) tinyWire {
	calls := kind == "tool-calls"
	switch adapter {
	case "openai-chat":
		if stream {
			w := tinyWire{head: `{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}`,
				tail: `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]"}
			if calls {
				w.part = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"name":"f"}}]}}]}`
			} else {
				w.part = `{"choices":[{"index":0,"delta":{"reasoning_content":"r","content":"t"}}]}`
			}
			return w
		}
		w := tinyWire{head: `{"id":"c","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`,
			part: `{"function":{"name":"f"}}`, sep: ",", tail: `]}}]}`}
		return w
	case "openai-responses":
		tail := `{"type":"response.completed","response":{"id":"r","status":"completed"}}`
		if stream {
			if calls {
				return tinyWire{part: `{"type":"response.output_item.added","output_index":%d,"item":{"type":"function_call","name":"f"}}`, tail: tail}
			}
			return tinyWire{part: `{"type":"response.output_text.delta","output_index":%d,"delta":"t"}`, tail: tail}
		}
		w := tinyWire{head: `{"id":"r","status":"completed","output":[`, sep: ",", tail: `]}`,
			part: `{"type":"function_call","name":"f"}`}
		if !calls {
			w.part = `{"type":"message","content":[{"text":"t"}]}`
		}
		return w
	case "anthropic":
		if stream {
			w := tinyWire{head: `{"type":"message_start","message":{"id":"m","model":"m"}}`,
				tail: `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}` + "\n\ndata: " + `{"type":"message_stop"}`}
			if calls {
				// The block index is bounded, but a block may start again.
				w.part = `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"f"}}`
			} else {
				w.part = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"t"}}`
			}
			return w
		}
		w := tinyWire{head: `{"id":"m","type":"message","role":"assistant","stop_reason":"end_turn","content":[`, sep: ",", tail: `]}`,
			part: `{"type":"tool_use","name":"f"}`}
		if !calls {
			w.part = `{"type":"text","text":"t"},{"type":"thinking","thinking":"r"}`
		}
		return w
	case "gemini":
		part := `{"functionCall":{"name":"f"}}`
		if !calls {
			part = `{"text":"t"},{"text":"r","thought":true}`
		}
		if stream {
			return tinyWire{head: `{"candidates":[{"index":0,"content":{"parts":[{"text":""}]}}]}`,
				part: part, sep: ",", perEvent: 1000, open: `{"candidates":[{"index":0,"content":{"parts":[`, close: `]}}]}`,
				tail: `{"candidates":[{"index":0,"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}`}
		}
		return tinyWire{head: `{"candidates":[{"index":0,"finishReason":"STOP","content":{"parts":[`, sep: ",", tail: `]}}]}`, part: part}
	}
	panic("no tiny wire for " + adapter)
}

// body returns the non-streamed body: as many parts as fit in size bytes
// (at most maxTinyParts).
func (w tinyWire) body(size int) []byte {
	b := []byte(w.head)
	for i := 0; i < maxTinyParts && len(b)+len(w.part)+len(w.sep)+len(w.tail) < size; i++ {
		if i > 0 {
			b = append(b, w.sep...)
		}
		b = w.appendPart(b, i)
	}
	return append(b, w.tail...)
}

func (w tinyWire) appendPart(b []byte, i int) []byte {
	before, after, ok := bytes.Cut([]byte(w.part), []byte("%d"))
	b = append(b, before...)
	if ok {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, after...)
	}
	return b
}

// serveStream writes the stream: maxTinyParts parts at most, stopping when
// the client has gone.
func (w tinyWire) serveStream(rw http.ResponseWriter) {
	rw.Header().Set("Content-Type", "text/event-stream")
	var b []byte
	event := func(data []byte) bool {
		b = append(append(append(b[:0], "data: "...), data...), "\n\n"...)
		_, err := rw.Write(b)
		return err == nil
	}
	if w.head != "" && !event([]byte(w.head)) {
		return
	}
	var data []byte
	for i := 0; i < maxTinyParts; {
		data = data[:0]
		if w.perEvent > 0 {
			data = append(data, w.open...)
			for j := 0; j < w.perEvent && i < maxTinyParts; j, i = j+1, i+1 {
				if j > 0 {
					data = append(data, w.sep...)
				}
				data = w.appendPart(data, i)
			}
			data = append(data, w.close...)
		} else {
			data = w.appendPart(data, i)
			i++
		}
		if !event(data) {
			return
		}
	}
	event([]byte(w.tail))
}

// TestManyTinyPartsBoundedMemory: a response of many tiny parts (tool
// calls with a one-byte name, text and reasoning of one byte that
// alternate), streamed or not, fails with runlet.ErrResponseTooLarge
// before it costs more than a few times MaxResponseBytes in heap: every
// part is charged a fixed overhead (httpc.PartOverhead) besides its bytes.
// Before, a part was charged its one or two bytes and cost about 650 bytes
// of heap (an OpenAI Chat stream of 80,000 tool calls used 48 MiB; with
// the 64 MiB default, many GiB).
func TestManyTinyPartsBoundedMemory(t *testing.T) {
	rows := []string{"openai-chat", "openai-responses", "anthropic", "gemini"}
	for _, kind := range []string{"tool-calls", "text-and-reasoning"} {
		for _, m := range modes {
			stream := m.name == "stream"
			for _, name := range rows {
				var a adapter
				for _, x := range adapters {
					if x.name == name {
						a = x
					}
				}
				w := tinyWires(name, stream, kind)
				// The largest body the adapter reads whole: twice the limit.
				body := w.body(2 * limit)
				t.Run(name+"/"+m.name+"/"+kind, func(t *testing.T) {
					srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
						if stream {
							w.serveStream(rw)
							return
						}
						rw.Header().Set("Content-Type", "application/json")
						_, _ = rw.Write(body)
					}))
					defer srv.Close()
					model := a.new(conf{BaseURL: srv.URL, APIKey: key, Max: limit})
					var err error
					cost := heapCost(func() { err = m.call(guard(t), model) })
					t.Logf("allocated %.2f MiB (%.1fx the limit)", float64(cost)/(1<<20), float64(cost)/limit)
					if !errors.Is(err, runlet.ErrResponseTooLarge) {
						t.Errorf("err = %v, want ErrResponseTooLarge", err)
					}
					if cost > maxPartsCost*limit {
						t.Errorf("allocated %d bytes reading the response, want at most %d (%dx MaxResponseBytes)", cost, maxPartsCost*limit, maxPartsCost)
					}
				})
			}
		}
	}
}

// maxPartsCost is the bound of TestManyTinyPartsBoundedMemory, in
// multiples of MaxResponseBytes: a body may be twice the limit (room for
// JSON's escaping), and reading it whole costs about twice its size.
const maxPartsCost = 6
