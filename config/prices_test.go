package config_test

import (
	"context"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
	"github.com/runlet/runlet/runlettest"
)

// A config's price table prices the runs of its runtime; a misspelt price
// key is an error, not a silently free token.
func TestPrices(t *testing.T) {
	l := &config.Loader{LookupEnv: env("OPENAI_API_KEY", "k")}
	f, err := l.Decode("prices.yaml", []byte(`
model: {provider: openai, name: gpt-test}
prices:
  gpt-test: {input: 2, cached_input: 0.5, output: 8}
  long-model:
    input: 1.25
    output: 10
    long_context_above: 200000
    long_context: {input: 2.5, output: 15}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Prices["long-model"]; p.LongContextAbove != 200000 || p.LongContext == nil || p.LongContext.Output != 15 || f.Prices["gpt-test"].CachedInput != 0.5 {
		t.Fatalf("prices %+v", f.Prices)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	reply := runlettest.TextReply("ok")
	reply.Response.Model = "gpt-test-2025-01-01"
	reply.Response.Usage = runlet.Usage{InputTokens: 1000, CachedInputTokens: 800, OutputTokens: 10}
	res, err := setup.NewRuntime().Run(context.Background(), &runlet.Agent{Model: runlettest.NewModel(reply)}, "hi")
	if err != nil || !res.Cost.Known() || res.Cost.Amount != (200*2+800*0.5+10*8)/1e6 {
		t.Fatalf("cost %+v err %v", res.Cost, err)
	}

	_, err = l.Decode("prices.yaml", []byte("model: {provider: openai, name: m}\nprices:\n  m: {input: 1, cached: 0.1}\n"))
	if err == nil || !strings.Contains(err.Error(), "cached") {
		t.Fatalf("misspelt key: %v", err)
	}
}
