package runlet

import "strings"

// Cost: what model calls cost, from a price table the user supplies (see
// WithPrices; package pricing has a dated built-in table).

// Price is what a model charges per million tokens, in one currency (US
// dollars in package pricing). Input is the price of input tokens read
// neither from nor into a cache; CachedInput of those read from the
// provider's prompt cache; CacheWrite of those written to it; Output of
// output tokens, reasoning included.
//
// A zero CachedInput or CacheWrite means the provider charges those tokens
// at the Input price (set a tiny positive price for tokens that are really
// free).
//
// Usage has one count of cache writes, whatever their lifetime, while
// Anthropic bills a 1-hour cache write higher than a 5-minute one: set
// CacheWrite to the price of the cache lifetime you ask for (the
// anthropic adapter's "cache_control" option; package pricing gives the
// 5-minute price).
//
// Some providers bill a whole call at higher prices when its input is long
// (Gemini Pro above 200k input tokens, Claude's 1M-token context): the
// call is priced at LongContext when LongContext is set and its input
// exceeds LongContextAbove tokens.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input,omitempty"`
	CacheWrite  float64 `json:"cache_write,omitempty"`
	Output      float64 `json:"output"`
	// WebSearch is the price of 1,000 hosted web searches
	// (Usage.WebSearchRequests), which providers bill on top of tokens.
	WebSearch float64 `json:"web_search,omitempty"`

	LongContextAbove int    `json:"long_context_above,omitempty"`
	LongContext      *Price `json:"long_context,omitempty"`
}

// Cost returns the cost of one call's usage at p. The adapters report
// Usage the same way whatever the provider (see Usage): InputTokens is the
// whole prompt, and the cache reads (CachedInputTokens) and cache writes
// (CacheWriteTokens) are parts of it. So the call costs
//
//	(InputTokens - CachedInputTokens - CacheWriteTokens) × Input
//	+ CachedInputTokens × CachedInput + CacheWriteTokens × CacheWrite
//	+ OutputTokens × Output
//
// divided by a million, plus WebSearchRequests × WebSearch / 1,000.
func (p Price) Cost(u Usage) float64 {
	search := p.WebSearch // per search, whatever the context length
	if p.LongContext != nil && p.LongContextAbove > 0 && u.InputTokens > p.LongContextAbove {
		p = *p.LongContext
	}
	cached, write := p.CachedInput, p.CacheWrite
	if cached == 0 {
		cached = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	plain := max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0)
	return (float64(plain)*p.Input+float64(u.CachedInputTokens)*cached+
		float64(u.CacheWriteTokens)*write+float64(u.OutputTokens)*p.Output)/1e6 +
		float64(u.WebSearchRequests)*search/1e3
}

// Pricer gives the price of a model by the name its provider reported
// (ModelResponse.Model), or false when it has none. Prices is the usual
// Pricer; implement one to look prices up elsewhere. Runs call it from
// their own goroutine, so one Pricer shared by concurrent runs must be
// safe for concurrent use.
type Pricer interface {
	Price(model string) (Price, bool)
}

// Prices is a price table by model name. It is a Pricer.
type Prices map[string]Price

// Price returns the price of model: its own entry, else, for a dated
// snapshot such as "gpt-4o-2024-08-06" or "claude-sonnet-4-5-20250929"
// (providers report these for an alias), the entry of the name without the
// date. Nothing else is guessed: "gpt-4o-mini" never takes "gpt-4o"'s
// price.
func (p Prices) Price(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	if base, ok := undated(model); ok {
		pr, ok := p[base]
		return pr, ok
	}
	return Price{}, false
}

// undated strips a trailing -YYYY-MM-DD or -YYYYMMDD.
func undated(model string) (string, bool) {
	digits := func(s string) bool {
		for i := range len(s) {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	if n := len(model); n > 11 && model[n-11] == '-' && model[n-6] == '-' && model[n-3] == '-' &&
		digits(model[n-10:n-6]) && digits(model[n-5:n-3]) && digits(model[n-2:]) {
		return model[:n-11], true
	}
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i == 9 && digits(model[i+1:]) {
		return model[:i], true
	}
	return "", false
}

// Cost is what model calls cost, in the currency of the price table.
// Amount is the cost of the calls whose model has a price; Unpriced counts
// the others, whose cost is unknown, not zero. A run without a price table
// (see WithPrices) has every call unpriced.
type Cost struct {
	Amount   float64 `json:"amount"`
	Unpriced int     `json:"unpriced,omitempty"`
}

// Known reports whether every call was priced, so that Amount is the whole
// cost rather than only its known part.
func (c Cost) Known() bool { return c.Unpriced == 0 }

// Add returns the sum of c and o.
func (c Cost) Add(o Cost) Cost {
	return Cost{Amount: c.Amount + o.Amount, Unpriced: c.Unpriced + o.Unpriced}
}

// WithPrices prices every model call of a run (ModelFinished.Cost,
// Result.Cost and Result.CostByModel) from p, by the model name the
// provider reported; a model p has no price for is unpriced (its cost
// unknown, never zero). On a run it replaces the Runtime's Pricer. For a
// built-in table, see package pricing; pass it with your own entries to
// cover more models.
func WithPrices(p Pricer) SharedOption {
	return sharedOption(func(s *scope) { s.pricer = p })
}

// price returns the cost of one call to model.
func (r *run) price(model string, u Usage) Cost {
	if r.pricer == nil {
		return Cost{Unpriced: 1}
	}
	p, ok := r.pricer.Price(model)
	if !ok {
		return Cost{Unpriced: 1}
	}
	return Cost{Amount: p.Cost(u)}
}
