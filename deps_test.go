package runlet_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The layering, enforced like the standard library's go/build/deps_test.go:
// the root package imports only the standard library and jsonschema-go;
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
	dec := json.NewDecoder(strings.NewReader(string(out)))
	pkgs := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs++
		for _, imp := range p.Imports {
			std := !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
			switch {
			case p.ImportPath == mod:
				if !std && imp != "github.com/google/jsonschema-go/jsonschema" {
					t.Errorf("the root package imports %s: only the standard library and jsonschema-go are allowed", imp)
				}
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
	if pkgs < 10 {
		t.Fatalf("go list found only %d packages", pkgs)
	}
}

// mayImportContract lists the internal packages allowed to import the
// provider contract (the root package's contract types, and modelkit).
// internal/httpc is the adapters' shared HTTP layer: it builds the
// *runlet.ProviderError every adapter returns and retries runlet.StreamEvent
// streams.
var mayImportContract = map[string]bool{
	"github.com/runlet/runlet/internal/httpc": true,
}

// adapter returns the adapter a providers/ package belongs to ("openai").
func adapter(path string) string {
	rest := path[strings.Index(path, "/providers/")+len("/providers/"):]
	return strings.SplitN(rest, "/", 2)[0]
}
