package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStructuredOffline(t *testing.T) {
	var out, errs strings.Builder
	noEnv := func(string) string { return "" }
	if err := run(t.Context(), "", noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Ada Lovelace ordered 2 line(s), 1250.50 EUR in total:\n  2 × analytical engine\n") {
		t.Errorf("stdout = %q", out.String())
	}
	for _, want := range []string{"answer 1 rejected, asking again", "currency", "answer 2 valid (native mode)"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("stderr lacks %q: %q", want, errs.String())
		}
	}
}
