package nodetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNodeMeetsEngines checks that the node the tests run is one every
// package of the JavaScript test project's lock file supports (its
// "engines": the AI SDK asks for 22 or later, playwright-core for 20),
// so that a machine whose system Node is older (Debian 12's is 18) still
// runs them.
func TestNodeMeetsEngines(t *testing.T) {
	dir := Project(t)
	node := Node(t)
	out, err := exec.Command(node, "-p", "process.versions.node").Output()
	if err != nil {
		t.Fatalf("%s: %v", node, err)
	}
	have, err := strconv.Atoi(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0])
	if err != nil {
		t.Fatalf("node version %q: %v", out, err)
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Packages map[string]struct {
			Engines json.RawMessage `json:"engines"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, p := range l.Packages {
		var engines struct{ Node string }
		if json.Unmarshal(p.Engines, &engines) != nil || !strings.HasPrefix(engines.Node, ">=") {
			continue // no engines, or a form this check does not read
		}
		want, err := strconv.Atoi(strings.SplitN(strings.TrimSpace(strings.TrimPrefix(engines.Node, ">=")), ".", 2)[0])
		if err != nil {
			continue
		}
		checked++
		if have < want {
			t.Errorf("%s needs node %s; the tests run %s, version %s", name, engines.Node, node, strings.TrimSpace(string(out)))
		}
	}
	if checked == 0 {
		t.Fatal("no package in the lock file names the node versions it supports")
	}
}
