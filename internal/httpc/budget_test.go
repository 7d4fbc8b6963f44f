package httpc

import (
	"errors"
	"testing"

	"github.com/runlet/runlet"
)

func TestCountObjects(t *testing.T) {
	cases := []struct {
		data  string
		depth int
		want  int
	}{
		{`{}`, 0, 1},
		{`{"a":[{},{}]}`, 0, 1},
		{`{"a":[{},{}]}`, 2, 3},
		{`{"a":[{"b":{}}]}`, 2, 2},
		{`{"a":"{{{[[["}`, 5, 1},     // braces in strings do not count
		{`{"a":"\"{\\"}`, 5, 1},      // nor after escaped quotes
		{`[{},{},{"x":[{}]}]`, 1, 3}, // a top-level array's objects
		{`{"choices":[{"delta":{"tool_calls":[{"index":0},{"index":1}]}}]}`, 5, 5},
	}
	for _, c := range cases {
		if got := CountObjects([]byte(c.data), c.depth); got != c.want {
			t.Errorf("CountObjects(%s, %d) = %d, want %d", c.data, c.depth, got, c.want)
		}
	}
}

// A budget charges PartOverhead per part, and CheckObjects refuses a large
// document of more objects than the rest of the budget allows.
func TestBudgetParts(t *testing.T) {
	b := NewBudget("p", 10*PartOverhead)
	if err := b.AddParts(10); err != nil {
		t.Fatalf("10 parts: %v", err)
	}
	if err := b.AddParts(1); !errors.Is(err, runlet.ErrResponseTooLarge) {
		t.Fatalf("11 parts: %v, want ErrResponseTooLarge", err)
	}
	doc := []byte(`{"a":[` + string(make([]byte, BigEvent)) + `{},{}]}`)
	for i := range BigEvent {
		doc[6+i] = ' '
	}
	b = NewBudget("p", 3*PartOverhead)
	if err := b.CheckObjects(doc, 2); err != nil {
		t.Fatalf("3 objects in a budget of 3 parts: %v", err)
	}
	b = NewBudget("p", 2*PartOverhead)
	if err := b.CheckObjects(doc, 2); !errors.Is(err, runlet.ErrResponseTooLarge) {
		t.Fatalf("3 objects in a budget of 2 parts: %v, want ErrResponseTooLarge", err)
	}
	if err := b.CheckObjects([]byte(`[{},{},{},{}]`), 2); err != nil {
		t.Fatalf("a small event is not counted: %v", err)
	}
}
