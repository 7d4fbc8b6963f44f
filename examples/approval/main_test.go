package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestApprovalFlow(t *testing.T) {
	var out strings.Builder
	db := filepath.Join(t.TempDir(), "a.db")
	err := run(context.Background(), false, "", db, strings.NewReader("y\nn\n"), &out)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"waiting for approval",
		"delete_file → deleted /tmp/reports/2024-q1.csv (pretend)",
		"delete_file → Error: call rejected: the user said no",
		"I deleted what you approved",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestApprovalEditArguments(t *testing.T) {
	var out strings.Builder
	err := run(context.Background(), false, "", filepath.Join(t.TempDir(), "a.db"), strings.NewReader("e\n/tmp/reports/old.csv\ny\n"), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "deleted /tmp/reports/old.csv (pretend)") {
		t.Fatalf("edited arguments not used:\n%s", out.String())
	}
}
