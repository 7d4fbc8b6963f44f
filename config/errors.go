package config

import (
	"fmt"
	"slices"
	"strings"
)

// Error is a problem in a config file: where it is and how to fix it.
// Load and Loader.Decode return every problem they find, joined with
// errors.Join; errors.As finds the first *Error.
type Error struct {
	File string // the file name, as given to Load or Decode
	// Line and Column locate the value (1-based); zero when the problem has
	// no single place, such as a missing section.
	Line, Column int
	// Field is the value's dotted path, such as "model.provider" or
	// "tools.1".
	Field string
	// Msg says what is wrong and, when it can, how to fix it.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File == "" {
		e2 := *e
		e2.File = "config"
		if e.Line == 0 {
			return strings.TrimPrefix(e2.Error(), "config: ")
		}
		return e2.Error()
	}
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// suggest returns ` did you mean "x"?` for the candidate closest to s, or
// "" when none is close.
func suggest(s string, candidates []string) string {
	if best := closest(s, candidates); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

// closest returns the candidate closest to s by edit distance, if it is
// close enough to be a plausible typo.
func closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(ls, lc)
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

// editDistance is the Damerau-Levenshtein distance (with adjacent
// transpositions) between a and b.
func editDistance(a, b string) int {
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

// list formats names for a message: "a, b and c".
func list(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
