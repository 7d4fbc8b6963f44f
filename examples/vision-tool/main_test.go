package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Offline, the fake server receives the tool's PNG in the tool_result
// (as an image block) and describes it.
func TestVisionToolOffline(t *testing.T) {
	var out, errs strings.Builder
	noEnv := func(string) string { return "" }
	if err := run(t.Context(), noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	want := "The chart (160x100 px) shows four blue bars rising from January to a peak in March, then falling in April.\n"
	if out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if !strings.Contains(errs.String(), `bar_chart returned image/png (`) || !strings.Contains(errs.String(), `{"title":"Monthly sales","values":[20,45,80,60]}`) {
		t.Errorf("stderr %q", errs.String())
	}
}
