package trusttest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
// reasoning that alternate, one byte each, so that every one is a new part
// (a Chat Completions message has one text: there, many choices).
func tinyWires(adapter string, stream bool, kind string) (w tinyWire, ok bool) {
	if kind == "one-event" {
		return batchedWire(adapter, stream)
	}
	return tinyWire1(adapter, stream, kind == "tool-calls"), true
}

// batchedWire is a stream whose events each hold thousands of tiny tool
// calls (Chat Completions and Gemini chunks; Responses' final event, the
// whole response), well under MaxResponseBytes each.
func batchedWire(adapter string, stream bool) (tinyWire, bool) {
	const n = 20_000
	switch {
	case !stream: // a body is one batch: the other kinds
	case adapter == "openai-chat":
		return tinyWire{part: `{"index":%d,"function":{"name":"f"}}`, sep: ",", perEvent: n,
			open:  `{"choices":[{"index":0,"delta":{"tool_calls":[`,
			close: `]}}]}`, tail: `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]"}, true
	case adapter == "openai-responses":
		return tinyWire{part: `{"type":"function_call","name":"f"}`, sep: ",", perEvent: n,
			open: `{"type":"response.completed","response":{"status":"completed","output":[`, close: `]}}`}, true
	case adapter == "gemini":
		return tinyWire{part: `{"functionCall":{"name":"f"}}`, sep: ",", perEvent: n,
			open:  `{"candidates":[{"index":0,"content":{"parts":[`,
			close: `]}}]}`, tail: `{"candidates":[{"index":0,"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}`}, true
	}
	return tinyWire{}, false // Anthropic: one block per event
}

func tinyWire1(adapter string, stream bool, calls bool) tinyWire {
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
		if !calls {
			// A message has one text: many choices (all but the first
			// ignored, still decoded).
			return tinyWire{head: `{"id":"c","model":"m","choices":[`, sep: ",", tail: `]}`,
				part: `{"finish_reason":"stop","message":{"content":"t"}}`}
		}
		return tinyWire{head: `{"id":"c","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`,
			part: `{"function":{"name":"f"}}`, sep: ",", tail: `]}}]}`}
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
	before, after, ok := strings.Cut(w.part, "%d") // allocates nothing: the server's costs count too
	b = append(b, before...)
	if ok {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, after...)
	}
	return b
}

// stream returns the event stream: maxTinyParts parts at most. It is
// built before the call, so that the server costs nothing while the client
// is measured.
func (w tinyWire) stream() []byte {
	var b []byte
	event := func(data string) { b = append(append(append(b, "data: "...), data...), "\n\n"...) }
	if w.head != "" {
		event(w.head)
	}
	for i := 0; i < maxTinyParts; {
		b = append(b, "data: "...)
		if w.perEvent > 0 {
			b = append(b, w.open...)
			for j := 0; j < w.perEvent && i < maxTinyParts; j, i = j+1, i+1 {
				if j > 0 {
					b = append(b, w.sep...)
				}
				b = w.appendPart(b, i)
			}
			b = append(b, w.close...)
		} else {
			b = w.appendPart(b, i)
			i++
		}
		b = append(b, "\n\n"...)
	}
	if w.tail != "" {
		event(w.tail)
	}
	return b
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
	for _, kind := range []string{"tool-calls", "text-and-reasoning", "one-event"} {
		for _, m := range modes {
			stream := m.name == "stream"
			for _, name := range rows {
				var a adapter
				for _, x := range adapters {
					if x.name == name {
						a = x
					}
				}
				w, ok := tinyWires(name, stream, kind)
				if !ok {
					continue
				}
				// The largest body the adapter reads whole: twice the limit.
				body := w.body(2 * limit)
				if stream {
					body = w.stream()
				}
				t.Run(name+"/"+m.name+"/"+kind, func(t *testing.T) {
					srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
						rw.Header().Set("Content-Type", "application/json")
						if stream {
							rw.Header().Set("Content-Type", "text/event-stream")
						}
						// Written in pieces, so that a client that stops
						// reading ends it.
						for rest := body; len(rest) > 0; {
							n := min(len(rest), 32<<10)
							if _, err := rw.Write(rest[:n]); err != nil {
								return
							}
							rest = rest[n:]
						}
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
const maxPartsCost = 5
