package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigReplay(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	var out, errs strings.Builder
	if err := run(t.Context(), "", "", &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The capital of the UK is London.\n" || !strings.Contains(errs.String(), "get_capital") {
		t.Errorf("stdout %q, stderr %q", out.String(), errs.String())
	}
}

func TestConfigErrorsNameTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(path, []byte("model:\n  provider: openai\n  nmae: gpt-4o-mini\n"), 0o644)
	err := run(t.Context(), path, "hi", &strings.Builder{}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), `agent.yaml:3:3: model.nmae: unknown field; did you mean "name"?`) {
		t.Errorf("err = %v", err)
	}
}
