package runlet_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layering, enforced like the standard library's go/build/deps_test.go:
// the root package imports only the standard library, jsonschema-go and
// this module's internal packages that import only the standard library;
// internal/ packages never import upward (providers; the root and modelkit
// only where mayImportContract allows it); an adapter never imports
// another adapter.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/runlet/runlet"
	out, err := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Standard", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath string
		Imports    []string
	}
	var pkgs []pkg
	stdOnly := map[string]bool{} // packages importing only the standard library
	isStd := func(imp string) bool { return !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") }
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
		stdOnly[p.ImportPath] = !slices.ContainsFunc(p.Imports, func(imp string) bool { return !isStd(imp) })
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			switch {
			case p.ImportPath == mod:
				if !isStd(imp) && imp != "github.com/google/jsonschema-go/jsonschema" && !(strings.HasPrefix(imp, mod+"/internal/") && stdOnly[imp]) {
					t.Errorf("the root package imports %s: only the standard library, jsonschema-go and internal packages importing only the standard library are allowed", imp)
				}
			case commandBody[p.ImportPath]:
				// A command's body imports what the command does.
			case strings.HasPrefix(p.ImportPath, mod+"/internal/"):
				if (imp == mod || imp == mod+"/modelkit") && !mayImportContract[p.ImportPath] || strings.HasPrefix(imp, mod+"/providers/") {
					t.Errorf("%s imports %s: internal packages never import upward", p.ImportPath, imp)
				}
			case strings.HasPrefix(p.ImportPath, mod+"/providers/"):
				if strings.HasPrefix(imp, mod+"/providers/") && adapter(imp) != adapter(p.ImportPath) {
					t.Errorf("%s imports %s: adapters never import each other", p.ImportPath, imp)
				}
			}
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
}

// mayImportContract lists the internal packages allowed to import the
// provider contract (the root package's contract types, and modelkit).
// internal/httpc is the adapters' shared HTTP layer: it builds the
// *runlet.ProviderError every adapter returns and retries runlet.StreamEvent
// streams. internal/toolresult is what the adapters share about sending a
// runlet.ToolResultPart that holds more than text.
var mayImportContract = map[string]bool{
	"github.com/runlet/runlet/internal/httpc":      true,
	"github.com/runlet/runlet/internal/toolresult": true,
}

// commandBody lists the internal packages that are a command's body, run
// by a thin main (cmd/runlet, and the cloud module's cloud/cmd/runlet,
// which internal/ visibility lets import it): they import like a command.
var commandBody = map[string]bool{
	"github.com/runlet/runlet/internal/cli": true,
}

// cloudSDKs are the import path prefixes of the cloud SDKs, which live in
// the nested module github.com/runlet/runlet/cloud only.
var cloudSDKs = []string{
	"github.com/aws/", "github.com/Azure/", "cloud.google.com/", "google.golang.org/api/",
	"golang.org/x/oauth2/google", "google.golang.org/genai", "github.com/anthropics/", "github.com/openai/",
}

// TestNoCloudSDK: nothing in the main module, the root, its adapters and
// the CLI included, links a cloud SDK, directly or through another
// package: they take credentials through Config.Token and
// config.ProviderOpeners, which the cloud module fills.
func TestNoCloudSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps found only %d packages", len(deps))
	}
	for _, dep := range deps {
		for _, sdk := range cloudSDKs {
			if strings.HasPrefix(dep, sdk) {
				t.Errorf("the main module links %s (a cloud SDK): it belongs in the nested module github.com/runlet/runlet/cloud", dep)
			}
		}
	}
}

// adapter returns the adapter a providers/ package belongs to ("openai").
func adapter(path string) string {
	rest := path[strings.Index(path, "/providers/")+len("/providers/"):]
	return strings.SplitN(rest, "/", 2)[0]
}
