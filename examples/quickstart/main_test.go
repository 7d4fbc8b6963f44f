package main

import (
	"strings"
	"testing"
)

func TestQuickstartReplay(t *testing.T) {
	var out, errs strings.Builder
	noEnv := func(string) string { return "" }
	if err := run(t.Context(), "anything", noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The capital of the UK is London.\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if !strings.Contains(errs.String(), "replaying a recorded session") || !strings.Contains(errs.String(), `get_capital({"country":"UK"}) = London`) {
		t.Errorf("stderr = %q", errs.String())
	}
}
