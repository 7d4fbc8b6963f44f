package config_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/config"
)

// hosted_tools become the agent's HostedTools; a kind no adapter knows, or
// a declaration without its provider, is an error at its line.
func TestHostedTools(t *testing.T) {
	src := `model: {provider: anthropic, name: claude-sonnet-4-5, api_key: k}
hosted_tools:
  - kind: web_search
    options: {max_uses: 3}
  - kind: code_execution
  - provider: anthropic
    declaration: {type: web_fetch_20250910, name: web_fetch}
`
	var l config.Loader
	f, err := l.Decode("agent.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := l.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	got := setup.Agent.HostedTools
	if len(got) != 3 || got[0].Kind != runlet.HostedWebSearch || fmt.Sprint(got[0].Options["max_uses"]) != "3" ||
		got[1].Kind != runlet.HostedCodeExecution || got[2].Provider != "anthropic" {
		t.Fatalf("hosted tools %+v", got)
	}
	var decl map[string]any
	if err := json.Unmarshal(got[2].Declaration, &decl); err != nil || decl["type"] != "web_fetch_20250910" || decl["name"] != "web_fetch" {
		t.Errorf("declaration %s", got[2].Declaration)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"hosted_tools:\n  - kind: image_generation\n", `agent.yaml:3`},
		{"hosted_tools:\n  - declaration: {type: x}\n", `provider`},
	} {
		_, err := l.Decode("agent.yaml", []byte("model: {provider: anthropic, name: m, api_key: k}\n"+bad.yaml))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v", bad.yaml, err)
		}
	}
}
