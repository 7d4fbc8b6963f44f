package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/runlet/runlet"
)

// printUsage writes the --usage report of a run to stderr: its usage and
// cost by model, then the totals. A model without a price says so: its
// cost is unknown, not zero, and the total is then marked incomplete.
func (a *app) printUsage(res *runlet.Result) {
	if res == nil {
		return
	}
	var b strings.Builder
	b.WriteString("Usage by model:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, model := range slices.Sorted(maps.Keys(res.UsageByModel)) {
		u, c := res.UsageByModel[model], res.CostByModel[model]
		name := model
		if name == "" {
			name = "(model not reported)"
		}
		cost := formatCost(c.Amount)
		if !c.Known() {
			cost = "cost unknown (no price)"
			if c.Unpriced < u.Requests {
				cost = formatCost(c.Amount) + fmt.Sprintf(" + %d unpriced call%s", c.Unpriced, plural(c.Unpriced))
			}
		}
		fmt.Fprintf(tw, "  %s\t%d call%s\t%s\t%s\t%s\n", name, u.Requests, plural(u.Requests), inputDetail(u), outputDetail(u), cost)
	}
	_ = tw.Flush()
	u, c := res.Usage, res.Cost
	fmt.Fprintf(&b, "Total: %d model call%s · %d input + %d output tokens · ", u.Requests, plural(u.Requests), u.InputTokens, u.OutputTokens)
	switch {
	case c.Known():
		b.WriteString(formatCost(c.Amount))
	case c.Unpriced == u.Requests:
		b.WriteString("cost unknown (no price for the models above; add them under prices: in --config)")
	default:
		fmt.Fprintf(&b, "at least %s (incomplete: %d call%s unpriced)", formatCost(c.Amount), c.Unpriced, plural(c.Unpriced))
	}
	b.WriteString("\n")
	fmt.Fprint(a.stderr, b.String())
}

func inputDetail(u runlet.Usage) string {
	s := strconv.Itoa(u.InputTokens) + " input"
	var parts []string
	if u.CachedInputTokens > 0 {
		parts = append(parts, strconv.Itoa(u.CachedInputTokens)+" cached")
	}
	if u.CacheWriteTokens > 0 {
		parts = append(parts, strconv.Itoa(u.CacheWriteTokens)+" cache write")
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func outputDetail(u runlet.Usage) string {
	s := strconv.Itoa(u.OutputTokens) + " output"
	if u.ReasoningTokens > 0 {
		s += " (" + strconv.Itoa(u.ReasoningTokens) + " reasoning)"
	}
	return s
}

// formatCost prints an amount in US dollars to a millionth, without
// trailing zeros: $0.000805, $1.25.
func formatCost(amount float64) string {
	return "$" + strconv.FormatFloat(math.Round(amount*1e6)/1e6, 'f', -1, 64)
}
