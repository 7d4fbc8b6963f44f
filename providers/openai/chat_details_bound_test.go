package openai

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/sse"
)

// allocated returns the bytes allocated since before (TotalAlloc).
func allocated(before *runtime.MemStats) uint64 {
	var now runtime.MemStats
	runtime.ReadMemStats(&now)
	return now.TotalAlloc - before.TotalAlloc
}

// Streamed reasoning_details cost memory and time linear in what the
// stream sends: the fragments of one entry grow its text in a builder
// (each was decoded, joined and encoded again: 13,000 fragments of 16
// bytes took 15 s and 4 GiB), and every new entry costs PartOverhead of
// MaxResponseBytes, as a part does (40,000 empty entries, 2 bytes each,
// cost 29 MiB under a 1 MiB limit). The bounds stop a regression early.
func TestChatDetailsBounded(t *testing.T) {
	const frags = 20_000
	t.Run("one-entry", func(t *testing.T) {
		d := newChatDecoder("openai", false, 0)
		data := []byte(`{"choices":[{"index":0,"delta":{"reasoning_details":[{"type":"reasoning.text","text":"aaaaaaaaaaaaaaaa","index":0}]}}]}`)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range frags {
			if err := d.feed(sse.Event{Data: data}); err != nil {
				t.Fatal(err)
			}
			if i%1000 == 999 && allocated(&before) > 256<<20 {
				t.Fatalf("%d fragments allocated over 256 MiB", i+1)
			}
		}
		cost := allocated(&before)
		t.Logf("%d fragments allocated %.1f MiB", frags, float64(cost)/(1<<20))
		if cost > 128<<20 {
			t.Fatalf("%d fragments allocated %d bytes, want at most 128 MiB (linear)", frags, cost)
		}
		want := strings.Repeat("a", 16*frags)
		if got := d.details.json(); !strings.Contains(got, `"text":"`+want+`"`) {
			t.Fatalf("merged details hold %d bytes, want the %d of the text", len(got), len(want))
		}
	})
	t.Run("many-entries", func(t *testing.T) {
		const limit = 1 << 20
		d := newChatDecoder("openai", false, limit)
		data := []byte(`{"choices":[{"index":0,"delta":{"reasoning_details":[{}]}}]}`)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var err error
		for i := 0; i < 100_000 && err == nil; i++ {
			err = d.feed(sse.Event{Data: data})
		}
		cost := allocated(&before)
		t.Logf("allocated %.1f MiB", float64(cost)/(1<<20))
		if !errors.Is(err, runlet.ErrResponseTooLarge) {
			t.Fatalf("err = %v, want ErrResponseTooLarge", err)
		}
		if cost > 4*limit {
			t.Fatalf("allocated %d bytes, want at most %d", cost, 4*limit)
		}
	})
}
