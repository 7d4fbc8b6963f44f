package cli

import (
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// --hosted asks the provider for its web search; the search and the
// sources the answer cites are printed on stderr, the answer on stdout.
func TestHostedFlag(t *testing.T) {
	notes := runlettest.AnthropicSearchResult{URL: "https://go.dev/doc/go1.26", Title: "Go 1.26 Release Notes", EncryptedContent: "E1"}
	content := append(runlettest.AnthropicWebSearch("srvtoolu_1", "go 1.26", notes),
		runlettest.AnthropicCitedText("Go 1.26 is out.", notes))
	ant := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{Content: content,
		Usage: runlettest.AnthropicUsage{InputTokens: 10, OutputTokens: 5, WebSearchRequests: 1}})
	defer ant.Close()
	r := runCLI(t, "", []string{"ANTHROPIC_API_KEY=k"}, "run", "--provider", "anthropic", "--base-url", ant.BaseURL(),
		"--model", "claude-test", "--hosted", "web_search", "--usage", "What is new in Go?")
	if r.code != 0 || r.stdout != "Go 1.26 is out.\n" {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{`⌕ web_search {"query":"go 1.26"} · 1 source`, "sources:\n  [1] Go 1.26 Release Notes https://go.dev/doc/go1.26\n", "1 web search"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r)
		}
	}
	if body := string(ant.Requests()[0].Body); !strings.Contains(body, `{"name":"web_search","type":"web_search_20250305"}`) {
		t.Errorf("request %s", body)
	}
	r = runCLI(t, "", []string{"ANTHROPIC_API_KEY=k"}, "run", "--provider", "anthropic", "--base-url", ant.BaseURL(),
		"--model", "claude-test", "--hosted", "web_serch", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown hosted tool kind "web_serch"`) {
		t.Errorf("a misspelt kind: %s", r)
	}
}
