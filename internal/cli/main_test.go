package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// bin is the runlet binary under test, built once by TestMain; gocache is
// the Go build cache, passed on to children whose XDG_CACHE_HOME changes.
var bin, gocache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runlet-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "runlet")
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		gocache = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/runlet").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// cleanEnv is the test process's environment without anything that would
// configure a provider, so the child starts as on a fresh machine, plus
// extra (KEY=VALUE).
func cleanEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "OPENAI_"), strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "RUNLET_"),
			strings.HasSuffix(k, "_API_KEY"), k == "XDG_CACHE_HOME", k == "NO_COLOR":
			continue
		}
		env = append(env, kv)
	}
	// Keep session stores out of the user's cache (but not Go's build
	// cache, which defaults to a directory under it).
	env = append(env, "XDG_CACHE_HOME="+t.TempDir())
	if gocache != "" && os.Getenv("GOCACHE") == "" {
		env = append(env, "GOCACHE="+gocache)
	}
	return append(env, extra...)
}

type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary with args, stdin and a clean environment plus env.
func runCLI(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cleanEnv(t, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("runlet %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", r.code, r.stdout, r.stderr)
}
