package trusttest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/runlet/runlet"
)

// limit is the MaxResponseBytes of the memory tests: small, so a test is
// cheap, and large against the fixed costs of a request.
const limit = 1 << 20

// guardBytes is where the fake servers stop sending: a regression reads
// this much (decompressed) and fails the test instead of growing without
// end.
const guardBytes = 16 << 20

// endless returns what a server sends that never ends its body: an SSE
// data line or a JSON string without end, cut at guardBytes, and gzipped
// when zip is set (then 16 MiB of it are well under 1 MiB on the wire); with
// lines, an event of endless data lines.
func endless(stream, lines, zip bool) []byte {
	prefix := `{"text":"`
	if stream {
		prefix = `data: {"text":"`
	}
	plain := append([]byte(prefix), bytes.Repeat([]byte("a"), guardBytes-len(prefix))...)
	if lines {
		// One event of endless data lines, never dispatched.
		plain = bytes.Repeat([]byte("data: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"), guardBytes/64)
	}
	if !zip {
		return plain
	}
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	_, _ = w.Write(plain)
	_ = w.Close()
	return b.Bytes()
}

// heapCost runs f and returns the bytes it allocated (TotalAlloc, an upper
// bound of the heap it grew by).
func heapCost(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestEndlessBodyBoundedMemory: a response that never ends, plain or
// gzipped (counted decompressed), streamed or not, fails with
// runlet.ErrResponseTooLarge after the adapter allocated no more than
// about twice MaxResponseBytes (3x allowed, for the request's fixed
// costs). Before, a non-streamed body cost about 6x the limit (bytes.Buffer
// doubling past twice the limit), and a streamed event up to the SSE
// reader's fixed 32 MiB limit whatever MaxResponseBytes said.
func TestEndlessBodyBoundedMemory(t *testing.T) {
	cases := []struct {
		name              string
		stream, lines     bool
		zip, explicitGzip bool
	}{
		{name: "generate", zip: false},
		{name: "generate/gzip", zip: true},
		{name: "generate/gzip-asked", zip: true, explicitGzip: true},
		{name: "stream/line", stream: true},
		{name: "stream/line/gzip", stream: true, zip: true},
		{name: "stream/line/gzip-asked", stream: true, zip: true, explicitGzip: true},
		{name: "stream/lines", stream: true, lines: true},
		{name: "stream/lines/gzip", stream: true, lines: true, zip: true},
	}
	for _, c := range cases {
		body := endless(c.stream, c.lines, c.zip)
		m := modes[0]
		if c.stream {
			m = modes[1]
		}
		for _, a := range adapters {
			t.Run(a.name+"/"+c.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if c.stream {
						w.Header().Set("Content-Type", "text/event-stream")
					} else {
						w.Header().Set("Content-Type", "application/json")
					}
					if c.zip {
						w.Header().Set("Content-Encoding", "gzip")
					}
					for rest := body; len(rest) > 0; {
						n := min(len(rest), 32<<10)
						if _, err := w.Write(rest[:n]); err != nil {
							return
						}
						rest = rest[n:]
					}
				}))
				defer srv.Close()
				cfg := conf{BaseURL: srv.URL, APIKey: key, Max: limit}
				if c.explicitGzip {
					// Asked for by the user: net/http leaves the body encoded.
					cfg.Headers = http.Header{"Accept-Encoding": {"gzip"}}
				}
				model := a.new(cfg)
				var err error
				cost := heapCost(func() { err = m.call(guard(t), model) })
				t.Logf("allocated %.2f MiB (%.1fx the limit)", float64(cost)/(1<<20), float64(cost)/limit)
				if !errors.Is(err, runlet.ErrResponseTooLarge) {
					t.Errorf("err = %v, want ErrResponseTooLarge", err)
				}
				if cost > 3*limit {
					t.Errorf("allocated %d bytes reading the response, want at most %d (3x MaxResponseBytes)", cost, 3*limit)
				}
			})
		}
	}
}
