package bedrock_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
)

// limit is MaxResponseBytes in the memory tests.
const limit = 1 << 20

func heapCost(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// tinyStream is an event stream of n tiny blocks of one kind.
func tinyStream(n int, block func(i int) (typ, payload string)) []byte {
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	write := func(typ, payload string) {
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue(typ))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
		_ = enc.Encode(&b, eventstream.Message{Headers: h, Payload: []byte(payload)})
	}
	write("messageStart", `{"role":"assistant"}`)
	for i := range n {
		write(block(i))
	}
	write("messageStop", `{"stopReason":"end_turn"}`)
	return b.Bytes()
}

// A response of many tiny parts (tool calls with a one-byte name, text
// and reasoning of one byte in blocks of their own, empty blocks, server
// tool blocks), streamed or not, fails with runlet.ErrResponseTooLarge
// before it costs more than a few times MaxResponseBytes: every block is
// charged a fixed overhead besides its bytes.
func TestManyTinyPartsBoundedMemory(t *testing.T) {
	const n = 20_000
	streams := map[string]func(i int) (string, string){
		"tool calls": func(i int) (string, string) {
			return "contentBlockStart", fmt.Sprintf(`{"contentBlockIndex":%d,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}`, i)
		},
		"text and reasoning": func(i int) (string, string) {
			if i%2 == 0 {
				return "contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"text":"a"}}`, i)
			}
			return "contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"reasoningContent":{"text":"a"}}}`, i)
		},
		"empty blocks": func(i int) (string, string) {
			return "contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"text":""}}`, i)
		},
		"server tool blocks": func(i int) (string, string) {
			return "contentBlockStart", fmt.Sprintf(`{"contentBlockIndex":%d,"start":{"toolUse":{"toolUseId":"t","name":"f","type":"server_tool_use"}}}`, i)
		},
	}
	for name, block := range streams {
		t.Run(name, func(t *testing.T) {
			body := tinyStream(n, block)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
				for rest := body; len(rest) > 0; {
					k := min(len(rest), 32<<10)
					if _, err := w.Write(rest[:k]); err != nil {
						return
					}
					rest = rest[k:]
				}
			}))
			defer srv.Close()
			m := newModelAt(t, srv.URL, bedrock.Config{MaxResponseBytes: limit, MaxRetries: -1})
			var err error
			cost := heapCost(func() {
				for _, e := range m.Stream(ctx(t), hello()) {
					if e != nil {
						err = e
					}
				}
			})
			t.Logf("allocated %.2f MiB (%.1fx the limit)", float64(cost)/(1<<20), float64(cost)/limit)
			if !errors.Is(err, runlet.ErrResponseTooLarge) {
				t.Errorf("err = %v, want ErrResponseTooLarge", err)
			}
			if cost > 5*limit {
				t.Errorf("allocated %d bytes, want at most 5x MaxResponseBytes", cost)
			}
		})
	}

	// Not streamed: a body of many tiny blocks, as large as is read whole
	// (twice the limit).
	var b bytes.Buffer
	b.WriteString(`{"output":{"message":{"role":"assistant","content":[`)
	for i := 0; b.Len() < 2*limit-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"text":"a"}`)
	}
	b.WriteString(`]}},"stopReason":"end_turn"}`)
	body := b.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	m := newModelAt(t, srv.URL, bedrock.Config{MaxResponseBytes: limit, MaxRetries: -1})
	var err error
	cost := heapCost(func() { _, err = m.Generate(ctx(t), hello()) })
	t.Logf("Generate allocated %.2f MiB (%.1fx the limit)", float64(cost)/(1<<20), float64(cost)/limit)
	if !errors.Is(err, runlet.ErrResponseTooLarge) || cost > 5*limit {
		t.Errorf("Generate: err = %v after %d bytes, want ErrResponseTooLarge within 5x the limit", err, cost)
	}
}
