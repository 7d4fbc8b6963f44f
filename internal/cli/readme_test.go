package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// codeBlocks returns the fenced code blocks of a Markdown file: language and
// content (without the fences, with its final newline).
func codeBlocks(t *testing.T, md string) (langs, blocks []string) {
	t.Helper()
	var cur *strings.Builder
	for line := range strings.Lines(md) {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			langs = append(langs, strings.TrimPrefix(trimmed, "```"))
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(trimmed) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return langs, blocks
}

func readme(t *testing.T) (root string, langs, blocks []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	langs, blocks = codeBlocks(t, string(data))
	if len(blocks) < 3 {
		t.Fatalf("README has %d code blocks", len(blocks))
	}
	return root, langs, blocks
}

// The README's first command, exactly as written, works on a fresh machine:
// no keys, no network (the child's environment has no provider variables).
func TestReadmeFirstCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	root, _, blocks := readme(t)
	command := strings.TrimSpace(blocks[0])
	if strings.Contains(command, "\n") || !strings.HasPrefix(command, "go run ./cmd/runlet") {
		t.Fatalf("the first README block is not the one-line runlet command:\n%s", command)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = root
	cmd.Env = cleanEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", command, err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "London") {
		t.Errorf("stdout lacks the recorded answer:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "REPLAY") || !strings.Contains(stderr.String(), "OPENAI_API_KEY") {
		t.Errorf("stderr does not say it is a replay and how to go live:\n%s", stderr.String())
	}
}

// The second command is the test command, and CI runs exactly that line.
func TestReadmeTestCommand(t *testing.T) {
	root, _, blocks := readme(t)
	const want = "go vet ./... && go test -race ./..."
	if got := strings.TrimSpace(blocks[1]); got != want {
		t.Errorf("second README block = %q, want %q", got, want)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Skip(".ci/run not present:", err)
	}
	found := false
	for line := range strings.Lines(string(ci)) {
		if strings.TrimSpace(line) == want {
			found = true
		}
	}
	if !found {
		t.Errorf(".ci/run does not run %q", want)
	}
}

// The Go quickstart in the README compiles (built through an overlay, so
// nothing is written into the tree).
func TestReadmeGoQuickstartBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	root, langs, blocks := readme(t)
	src := ""
	for i, l := range langs {
		if l == "go" && strings.HasPrefix(blocks[i], "package main") {
			src = blocks[i]
			break
		}
	}
	if src == "" {
		t.Fatal("no Go quickstart (a go block with package main) in the README")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(root, "cmd", "runlet", "testdata", "readmequickstart", "main.go")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{virtual: file}})
	ovFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "go", "build", "-overlay", ovFile, "-o", os.DevNull, "./cmd/runlet/testdata/readmequickstart")
	cmd.Dir = root
	cmd.Env = cleanEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README quickstart does not build: %v\n%s", err, out)
	}
}
