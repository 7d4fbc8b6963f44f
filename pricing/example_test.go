package pricing_test

import (
	"fmt"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/pricing"
)

// The built-in table with your own prices for the models it lacks.
func ExampleWith() {
	prices := pricing.With(runlet.Prices{
		"my-local-model": {Input: 0, Output: 0}, // free: known, and zero
	})
	_ = runlet.NewRuntime(runlet.WithPrices(prices))

	p, _ := prices.Price("claude-haiku-4-5-20251001")
	fmt.Printf("Haiku 4.5: $%v in, $%v cached, $%v out per million tokens (%s)\n", p.Input, p.CachedInput, p.Output, pricing.Date)
	_, ok := prices.Price("some-other-model")
	fmt.Println("unknown model priced:", ok)
	// Output:
	// Haiku 4.5: $1 in, $0.1 cached, $5 out per million tokens (2026-12-01)
	// unknown model priced: false
}
