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
	s, err := OutputForE[benchInvoice]()
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
