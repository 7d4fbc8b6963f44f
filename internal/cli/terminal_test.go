package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// /dev/null is a character device but not a terminal: chat must not greet,
// prompt or colour as if someone were typing.
func TestDevNullIsNotATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Error("isTerminal(/dev/null) = true")
	}

	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	cmd := exec.Command(bin, "chat", "--base-url", srv.BaseURL(), "--model", "m")
	cmd.Env = cleanEnv(t)
	cmd.Stdin = null
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chat < /dev/null: %v\n%s", err, stderr.String())
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, "runlet chat") || strings.Contains(out, "›") {
		t.Errorf("chat < /dev/null acts as on a terminal:\n%s", out)
	}
}

// The offline replay says which of the given flags it could not honour.
func TestReplayNamesIgnoredFlags(t *testing.T) {
	r := runCLI(t, "", nil, "run", "--tool", "calculator", "--system", "Be brief.", "--temperature", "0.2", "--json", "Hi")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	if want := "the replay ignores --system, --temperature, --tool:"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	r = runCLI(t, "", nil, "run", "--model", "gpt-5", "--option", "seed=1", "Hi")
	if want := "the replay ignores --model, --option:"; r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q\n%s", want, r)
	}
	// Output flags are honoured: nothing to say.
	r = runCLI(t, "", nil, "run", "--no-reasoning", "Hi")
	if r.code != 0 || strings.Contains(r.stderr, "ignores") {
		t.Errorf("%s", r)
	}
}
