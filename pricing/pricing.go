// Package pricing is a small built-in price table for runlet.WithPrices:
// US dollars per million tokens for a handful of current models, each
// copied from its provider's own pricing page.
//
//	rt := runlet.NewRuntime(runlet.WithPrices(pricing.Table))
//
// Table is dated: prices change, and models come and go. It states the
// prices as of Date, from the pages listed in Sources; check them before
// you bill anyone, and add or override entries with With.
//
// What the table covers. Only models whose price could be read on the
// provider's own page are in it; a model missing here is unpriced (its cost
// unknown, never zero), never priced by a guess. OpenAI and Google models
// are not in it yet: their official pricing pages could not be read when
// the table was made (pass your own prices, see With). Claude Sonnet 5 and
// 5.5 are left out because their prices changed during 2026 (a cancelled
// increase, a cache-read cut) and the current figures could not be
// confirmed; so are the 1M-context Claude 4.6 models, whose pages did not
// settle whether prompts over 200k tokens are billed at a higher tier.
// Opus 5's page gives one flat price for its whole 1M context; Opus 4.5
// and Haiku 4.5 have a 200k context.
//
// What a price covers. Price.Input is the base input price, CachedInput the
// cache-hit ("cache hits and refreshes") price, CacheWrite the 5-minute
// cache-write price, Output the output price (thinking included). Prices
// for the Batch API, 1-hour cache writes (billed higher; the adapters
// report all cache writes as one count), data-residency multipliers
// (inference_geo), fast modes and server tools (web search, code
// execution) are not in the table: a run using them costs more than its
// Cost says, unless a price of yours sets WebSearch (per 1,000 searches,
// counted in Usage.WebSearchRequests) from your provider's page.
package pricing

import (
	"maps"

	"github.com/runlet/runlet"
)

// Date is the day the prices in Table were read from Sources.
const Date = "2026-12-01"

// Sources lists the pages the prices in Table come from.
var Sources = []string{
	"https://platform.claude.com/docs/en/about-claude/pricing",
	"https://platform.claude.com/docs/en/models/opus-5/overview",
}

// Table holds the built-in prices, keyed by model ID as the API takes it
// (runlet.Prices also matches the dated IDs providers report, such as
// "claude-haiku-4-5-20251001"). Treat it as read-only; With returns a copy
// with your own entries.
var Table = runlet.Prices{
	// platform.claude.com/docs/en/models/opus-5/overview ("Pricing"): input
	// $5, 5m cache write $6.25, cache read $0.50, output $25 per MTok; the
	// same on the pricing page.
	"claude-opus-5": {Input: 5, CacheWrite: 6.25, CachedInput: 0.50, Output: 25},
	// The pricing page's model table ("Claude Opus 4.5"): base input $5,
	// 5m cache writes $6.25, cache hits $0.50, output $25 per MTok.
	"claude-opus-4-5": {Input: 5, CacheWrite: 6.25, CachedInput: 0.50, Output: 25},
	// The pricing page ("Claude Haiku 4.5"): base input $1, 5m cache writes
	// $1.25, cache hits $0.10, output $5 per MTok.
	"claude-haiku-4-5": {Input: 1, CacheWrite: 1.25, CachedInput: 0.10, Output: 5},
}

// With returns a copy of Table with extra's entries added, replacing the
// table's for the same model: your prices for the models Table lacks, or
// the prices you actually pay.
func With(extra runlet.Prices) runlet.Prices {
	out := maps.Clone(Table)
	maps.Copy(out, extra)
	return out
}
