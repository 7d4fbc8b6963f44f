package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOffline(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), false, "", "What should I pack for Lisbon?", &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"triage hands off to travel",
		"    └ researcher starts: \"Weather forecast for Lisbon next week?\"",
		"      researcher → get_forecast: Lisbon next week",
		"  travel → researcher: Lisbon next week: 18-24°C",
		"travel answers: Pack light layers",
		"usage researcher 2 calls",
		"usage travel     2 calls",
		"usage triage     1 calls",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
