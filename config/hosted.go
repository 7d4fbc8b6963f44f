package config

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/runlet/runlet"
)

// HostedTool is a tool the provider runs itself (runlet.HostedTool): a
// common kind, with provider-specific options merged into its declaration,
// or one provider's own declaration, sent only by that adapter.
//
//	hosted_tools:
//	  - kind: web_search            # web_search, code_execution or web_fetch
//	    options: {max_uses: 3}
//	  - provider: anthropic         # any other tool, as the provider declares it
//	    declaration: {type: web_fetch_20250910, name: web_fetch}
type HostedTool struct {
	Kind        string         `yaml:"kind"`
	Options     map[string]any `yaml:"options"`
	Provider    string         `yaml:"provider"`
	Declaration map[string]any `yaml:"declaration"`
}

// hostedKinds are the kinds a config may name.
var hostedKinds = []string{string(runlet.HostedWebSearch), string(runlet.HostedCodeExecution), string(runlet.HostedWebFetch)}

// hostedTools converts the file's hosted tools, or returns an *Error for
// each one that names neither a known kind nor a provider's declaration.
func (f *File) hostedTools() ([]runlet.HostedTool, []error) {
	var out []runlet.HostedTool
	var errs []error
	for i, h := range f.HostedTools {
		field := "hosted_tools." + strconv.Itoa(i)
		switch {
		case h.Declaration != nil:
			if h.Provider == "" || h.Kind != "" {
				errs = append(errs, f.errAt(field, "", "a declaration needs the provider it is for, and no kind"))
				continue
			}
			raw, err := json.Marshal(h.Declaration)
			if err != nil {
				errs = append(errs, f.errAt(field+".declaration", "", "%s", err.Error()))
				continue
			}
			out = append(out, runlet.HostedTool{Provider: h.Provider, Declaration: raw})
		case known(h.Kind):
			if h.Provider != "" {
				errs = append(errs, f.errAt(field+".provider", h.Provider, "provider is for a declaration; a kind is for every provider"))
				continue
			}
			out = append(out, runlet.HostedTool{Kind: runlet.HostedToolKind(h.Kind), Options: h.Options})
		default:
			errs = append(errs, f.errAt(field+".kind", h.Kind, "%s", fmt.Sprintf("unknown hosted tool kind %q: want %q, %q or %q, or a provider's declaration", h.Kind, hostedKinds[0], hostedKinds[1], hostedKinds[2])))
		}
	}
	return out, errs
}

func known(kind string) bool {
	for _, k := range hostedKinds {
		if k == kind {
			return true
		}
	}
	return false
}
