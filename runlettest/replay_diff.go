package runlettest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// maxDiffs bounds the differences a MismatchError lists.
const maxDiffs = 12

// diffBodies compares a recorded request body with the one sent. JSON
// bodies are compared as JSON values (key order, whitespace and number
// spelling do not matter), without the ignored paths; other bodies byte for
// byte, reporting the first differing line.
func diffBodies(rec, got []byte, ignore [][]string) []string {
	rv, rerr := decodeJSON(rec)
	gv, gerr := decodeJSON(got)
	if rerr == nil && gerr == nil {
		for _, p := range ignore {
			rv = stripPath(rv, p)
			gv = stripPath(gv, p)
		}
		var d differ
		d.walk(nil, rv, gv)
		if d.more > 0 {
			d.out = append(d.out, fmt.Sprintf("... and %d more", d.more))
		}
		return d.out
	}
	if bytes.Equal(rec, got) {
		return nil
	}
	switch {
	case rerr == nil:
		return []string{fmt.Sprintf("recorded a JSON body, got %s", short(string(got)))}
	case gerr == nil:
		return []string{fmt.Sprintf("recorded %s, got a JSON body", short(string(rec)))}
	}
	rl, gl := strings.Split(string(rec), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(rl), len(gl)) {
		var r, g string
		if i < len(rl) {
			r = rl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if r != g || i >= len(rl) || i >= len(gl) {
			return []string{fmt.Sprintf("line %d: recorded %s, got %s", i+1, short(strconv.Quote(r)), short(strconv.Quote(g)))}
		}
	}
	return []string{"bodies differ"}
}

// decodeJSON decodes a JSON body; an empty body is nil.
func decodeJSON(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// stripPath removes the value at path (with "*" wildcards) from v.
func stripPath(v any, path []string) any {
	if len(path) == 0 {
		return v
	}
	key, rest := path[0], path[1:]
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if key != "*" && key != k {
				continue
			}
			if len(rest) == 0 {
				delete(x, k)
			} else {
				x[k] = stripPath(child, rest)
			}
		}
	case []any:
		if len(rest) == 0 {
			// Removing an array element would shift the others; blank it
			// in place instead, so indexes keep their meaning.
			for i := range x {
				if key == "*" || key == strconv.Itoa(i) {
					x[i] = ignoredValue{}
				}
			}
			return x
		}
		for i, child := range x {
			if key == "*" || key == strconv.Itoa(i) {
				x[i] = stripPath(child, rest)
			}
		}
	}
	return v
}

// ignoredValue stands for an ignored array element; it equals anything.
type ignoredValue struct{}

type differ struct {
	out  []string
	more int
}

func (d *differ) add(path []string, format string, args ...any) {
	if len(d.out) >= maxDiffs {
		d.more++
		return
	}
	p := strings.Join(path, ".")
	if p == "" {
		p = "(root)"
	}
	d.out = append(d.out, p+": "+fmt.Sprintf(format, args...))
}

func (d *differ) walk(path []string, rec, got any) {
	if _, ok := rec.(ignoredValue); ok {
		return
	}
	if _, ok := got.(ignoredValue); ok {
		return
	}
	switch r := rec.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			d.add(path, "recorded %s, got %s", show(rec), show(got))
			return
		}
		keys := make([]string, 0, len(r)+len(g))
		for k := range r {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := r[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			rv, rok := r[k]
			gv, gok := g[k]
			p := append(slices.Clip(path), k)
			switch {
			case !gok:
				d.add(p, "recorded %s, missing", show(rv))
			case !rok:
				d.add(p, "not recorded, got %s", show(gv))
			default:
				d.walk(p, rv, gv)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			d.add(path, "recorded %s, got %s", show(rec), show(got))
			return
		}
		for i := range min(len(r), len(g)) {
			d.walk(append(slices.Clip(path), strconv.Itoa(i)), r[i], g[i])
		}
		if len(r) != len(g) {
			d.add(path, "recorded %d items, got %d", len(r), len(g))
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(r, g) {
			d.add(path, "recorded %s, got %s", show(rec), show(got))
		}
	default:
		if rec != got {
			d.add(path, "recorded %s, got %s", show(rec), show(got))
		}
	}
}

// sameNumber compares JSON numbers by value, so 1, 1.0 and 1e0 are equal.
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, okx := new(big.Rat).SetString(string(a))
	y, oky := new(big.Rat).SetString(string(b))
	return okx && oky && x.Cmp(y) == 0
}

// show formats a JSON value for a diff line, shortened.
func show(v any) string { return short(compactJSON(v)) }

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// short cuts s to about 80 characters.
func short(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…(%d bytes)", len(s))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
