package runlet

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

type benchLine struct {
	SKU      string  `json:"sku" jsonschema:"stock keeping unit"`
	Quantity int     `json:"quantity"`
	Price    float64 `json:"price"`
	Note     string  `json:"note,omitempty"`
}

type benchInvoice struct {
	Number   string      `json:"number"`
	Customer string      `json:"customer"`
	Currency string      `json:"currency,omitempty"`
	Lines    []benchLine `json:"lines"`
	Paid     bool        `json:"paid"`
}

// benchAnswer is a 20-line invoice (about 1.5 KB of JSON).
func benchAnswer() string {
	var b strings.Builder
	b.WriteString(`{"number":"INV-2026-0042","customer":"Ada Lovelace","currency":"EUR","paid":false,"lines":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"sku":"SKU-` + strconv.Itoa(i) + `","quantity":` + strconv.Itoa(i+1) + `,"price":12.5,"note":"with care"}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkOutputCheck is what a run does with a final answer: parse,
// validate against the inferred schema, decode into the type. Compare with
// BenchmarkOutputUnmarshal, json.Unmarshal of the same bytes.
func BenchmarkOutputCheck(b *testing.B) {
	s, err := outputFor[benchInvoice]()
	if err != nil {
		b.Fatal(err)
	}
	resolved, err := resolveOutput(s.Schema)
	if err != nil {
		b.Fatal(err)
	}
	var v benchInvoice
	o := &outputState{mode: OutputNative, schema: s, sent: s.Schema, resolved: resolved, decode: func(raw json.RawMessage) error {
		v = benchInvoice{}
		return json.Unmarshal(raw, &v)
	}}
	raw := benchAnswer()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := o.check(raw, false, FinishStop); errs != nil {
			b.Fatal(errs)
		}
	}
}

func BenchmarkOutputUnmarshal(b *testing.B) {
	raw := []byte(benchAnswer())
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var v benchInvoice
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPartialJSON parses every prefix of the answer, as streaming does
// once per delta (here one delta per 16 bytes).
func BenchmarkPartialJSON(b *testing.B) {
	raw := []byte(benchAnswer())
	b.ReportAllocs()
	for b.Loop() {
		for i := 16; i < len(raw); i += 16 {
			parsePartialJSON(raw[:i])
		}
	}
}

// BenchmarkOutputStreamLong follows a 20 KB answer streamed in 4-byte
// deltas, as a run does to emit OutputPartial events.
func BenchmarkOutputStreamLong(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"number":"INV","customer":"Ada","paid":true,"lines":[`)
	for i := 0; sb.Len() < 20<<10; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"sku":"SKU-` + strconv.Itoa(i) + `","quantity":3,"price":1.25,"note":"a longer note to make the line longer"}`)
	}
	sb.WriteString(`]}`)
	raw := sb.String()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		o := &outputState{mode: OutputNative, callIndex: -1}
		events := 0
		for i := 0; i < len(raw); i += 4 {
			if _, ok := o.partial(StreamEvent{Kind: StreamTextDelta, Delta: raw[i:min(i+4, len(raw))]}); ok {
				events++
			}
		}
		if events < 50 {
			b.Fatalf("%d partial events", events)
		}
	}
}
