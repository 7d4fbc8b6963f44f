package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAssetsUpToDate rebuilds the page with web/build.sh (NPM_CI=0) into a
// temporary directory and checks the committed assets/app.js is
// what it builds, so a change to web/src cannot ship without its build.
// It needs web/node_modules (npm ci in web/), and skips without it.
func TestAssetsUpToDate(t *testing.T) {
	esbuild, err := filepath.Abs(filepath.Join("web", "node_modules", ".bin", "esbuild"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(esbuild); err != nil {
		t.Skip("web/node_modules is not installed (npm ci in examples/webchat/web)")
	}
	out := filepath.Join(t.TempDir(), "app.js")
	cmd := exec.Command("bash", filepath.Join("web", "build.sh"))
	cmd.Env = append(os.Environ(), "OUT="+out, "NPM_CI=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("web/build.sh: %v\n%s", err, b)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("assets", "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, committed) {
		t.Errorf("assets/app.js (%d bytes) is not what web/src builds (%d bytes): run web/build.sh", len(committed), len(built))
	}
}
