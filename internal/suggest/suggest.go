// Package suggest finds the name a user probably meant: the one
// "did you mean" helper shared by the CLI and the config loader, so both
// suggest the same thing for the same typo.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the candidate closest to s by edit distance (ignoring
// case, counting an adjacent transposition as one edit), if it is close
// enough to be a plausible typo; otherwise "".
func Closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(ls, lc)
		if strings.HasPrefix(lc, ls) || strings.HasPrefix(ls, lc) {
			d = min(d, 2)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" && bestD <= max(2, len(s)/3) && bestD < len(s) {
		return best
	}
	return ""
}

// Hint returns `; did you mean "x"?` for the candidate Closest finds, or ""
// when none is close.
func Hint(s string, candidates []string) string {
	if best := Closest(s, candidates); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

// Distance is the Damerau-Levenshtein distance (with adjacent
// transpositions) between a and b, in runes. It is case-sensitive.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
