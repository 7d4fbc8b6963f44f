package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWebSearchOffline(t *testing.T) {
	var out, errs strings.Builder
	noEnv := func(string) string { return "" }
	if err := run(t.Context(), "", noEnv, &out, &errs); err != nil {
		t.Fatal(err)
	}
	want := `According to the release notes, Go 1.26 refines the language and the toolchain and speeds up the runtime. It was released in February 2026.

citations:
  "Go 1.26 refines the language and the toolchain and speeds up the runtime." [1]
  "It was released in February 2026." [2]
sources:
  [1] Go 1.26 Release Notes <https://go.dev/doc/go1.26>
  [2] Go 1.26 is released <https://go.dev/blog/go1.26>
web searches: 1
`
	if out.String() != want {
		t.Errorf("stdout\n%s\nwant\n%s", out.String(), want)
	}
	if !strings.Contains(errs.String(), `web_search {"query":"Go 1.26 release notes"}: 2 source(s)`) {
		t.Errorf("stderr %q", errs.String())
	}
}

// TestWebSearchOneTerminal runs the example with stdout and stderr on one
// writer, as on a terminal: the search's line comes after the streamed
// answer (HostedToolFinished follows the model call) and must start a line
// of its own, not run on from the answer's last sentence.
func TestWebSearchOneTerminal(t *testing.T) {
	var term strings.Builder
	noEnv := func(string) string { return "" }
	if err := run(t.Context(), "", noEnv, &term, &term); err != nil {
		t.Fatal(err)
	}
	want := "It was released in February 2026.\nweb_search {\"query\":\"Go 1.26 release notes\"}: 2 source(s)\n\ncitations:\n"
	if !strings.Contains(term.String(), want) {
		t.Errorf("the terminal shows\n%s\nwant it to hold\n%s", term.String(), want)
	}
}
