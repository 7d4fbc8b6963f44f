package openai

import (
	"strconv"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/sse"
)

// A stream of many tool calls costs time linear in their number: each
// delta finds its call in constant time. The calls were found by a scan,
// and 160,000 one-byte calls took 27 s; 200,000 now take well under a
// second (50,000 under the race detector, about 2 s). The 30 s bound only
// stops a regression.
func TestChatStreamManyToolCalls(t *testing.T) {
	n := 200_000
	if raceEnabled {
		n = 50_000
	}
	// Each call costs httpc.PartOverhead of the limit: 200,000 need more
	// than the 64 MiB default.
	d := newChatDecoder("openai", false, 1<<30)
	start := time.Now()
	var data []byte
	for i := range n {
		data = append(data[:0], `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":`...)
		data = strconv.AppendInt(data, int64(i), 10)
		data = append(data, `,"id":"c`...)
		data = strconv.AppendInt(data, int64(i), 10)
		data = append(data, `","function":{"name":"a","arguments":"{}"}}]}}]}`...)
		if err := d.feed(sse.Event{Data: data}); err != nil {
			t.Fatal(err)
		}
		// A second delta for an earlier call finds it too.
		if i%1000 == 999 {
			if err := d.feed(sse.Event{Data: []byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(i-500) + `,"function":{"arguments":" "}}]}}]}`)}); err != nil {
				t.Fatal(err)
			}
		}
		if i%10_000 == 0 && time.Since(start) > 30*time.Second {
			t.Fatalf("%d tool calls took over 30 s", i)
		}
	}
	if err := d.feed(sse.Event{Data: []byte(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := d.feed(sse.Event{Data: []byte("[DONE]")}); err != nil {
		t.Fatal(err)
	}
	resp, err := d.finish()
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != n {
		t.Fatalf("%d calls, want %d", len(calls), n)
	}
	for i, c := range calls {
		want := "{}"
		if i%1000 == 499 {
			want = "{} "
		}
		if c.ID != "c"+strconv.Itoa(i) || string(c.Arguments) != want {
			t.Fatalf("call %d = %+v", i, c)
		}
	}
	t.Logf("%d tool calls decoded in %v", n, time.Since(start))
}
