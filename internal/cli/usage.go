package cli

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
// cost by model, by agent when more than one answered (an agent the
// config's agent called as a tool, or handed off to), then the totals. A
// model without a price says so: its cost is unknown, not zero, and the
// total is then marked incomplete.
func (a *app) printUsage(res *runlet.Result) {
	if res == nil {
		return
	}
	var b strings.Builder
	b.WriteString("Usage by model:\n")
	usageTable(&b, res.UsageByModel, res.CostByModel, "(model not reported)")
	if len(res.UsageByAgent) > 1 {
		b.WriteString("Usage by agent:\n")
		usageTable(&b, res.UsageByAgent, res.CostByAgent, "(unnamed agent)")
	}
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

// usageTable writes one line per key of usage, sorted: its calls, tokens
// and cost. unnamed stands for the empty key.
func usageTable(b *strings.Builder, usage map[string]runlet.Usage, costs map[string]runlet.Cost, unnamed string) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, key := range slices.Sorted(maps.Keys(usage)) {
		u, c := usage[key], costs[key]
		name := key
		if name == "" {
			name = unnamed
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
