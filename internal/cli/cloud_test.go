package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet/config"
)

// TestCloudProvidersNeedTheCloudBuild: this build, which links no cloud
// SDK, says which command to use for bedrock and vertex (from --provider
// or a config file), and for Azure without a key; nothing is sent.
func TestCloudProvidersNeedTheCloudBuild(t *testing.T) {
	dir := t.TempDir()
	cfg := dir + "/vertex.yaml"
	writeFile(t, cfg, "model: {provider: vertex, name: gemini-2.5-flash, project: p}\n")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--provider", "vertex", "hi"}, []string{"provider vertex", "Application Default Credentials", "cloud/cmd/runlet"}},
		{[]string{"run", "--provider", "bedrock", "--model", "amazon.nova-pro-v1:0", "hi"}, []string{"provider bedrock", "AWS SDK", "cloud/cmd/runlet"}},
		{[]string{"run", "--config", cfg, "hi"}, []string{"model.provider", "cannot reach Vertex AI", "cloud/cmd/runlet"}},
		{[]string{"run", "--provider", "azure", "--base-url", "https://r.openai.azure.com", "--model", "d", "hi"}, []string{"AZURE_OPENAI_API_KEY is not set", "Entra ID", "cloud/cmd/runlet"}},
		{[]string{"run", "--provider", "openai", "--region", "us-east-1", "hi"}, []string{"--region is only for --provider bedrock"}},
		{[]string{"run", "--provider", "anthropic", "--api-version", "2024-10-21", "hi"}, []string{"--api-version is only for --provider azure or azure-responses"}},
	} {
		r := runCLI(t, "", nil, c.args...)
		for _, w := range c.want {
			if r.code != exitUsage || !strings.Contains(r.stderr, w) {
				t.Errorf("runlet %v: want exit 2 saying %q\n%s", c.args, w, r)
			}
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCloudExtensions: with the cloud's credentials registered (as
// cloud/cmd/runlet does), --provider vertex reaches Vertex AI with the
// token they give, and azure without a key gets an Entra ID token.
func TestCloudExtensions(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/publishers/google/") {
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"from vertex"}]},"finishReason":"STOP"}]}`)
			return
		}
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"d","choices":[{"index":0,"message":{"role":"assistant","content":"from azure"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "")
	t.Setenv("AZURE_OPENAI_API_KEY", "")
	ext := Extensions{Providers: config.ProviderOpeners{
		GoogleToken: func() (func(context.Context) (string, error), string, error) {
			return func(context.Context) (string, error) { return "ya29.cli", nil }, "adc-proj", nil
		},
		EntraToken: func() (func(context.Context) (string, error), error) {
			return func(context.Context) (string, error) { return "entra.cli", nil }, nil
		},
	}}
	for _, c := range []struct {
		args       []string
		out, wantR string
	}{
		{[]string{"run", "--provider", "vertex", "--base-url", srv.URL, "--model", "gemini-2.5-flash", "hi"}, "from vertex\n",
			"/v1/projects/adc-proj/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent Bearer ya29.cli"},
		{[]string{"run", "--provider", "azure", "--base-url", srv.URL, "--model", "d", "hi"}, "from azure\n",
			"/openai/v1/chat/completions Bearer entra.cli"},
		{[]string{"run", "--provider", "vertex", "--project", "flag-proj", "--location", "europe-west4", "--base-url", srv.URL, "--model", "gemini-2.5-pro", "hi"}, "from vertex\n",
			"/v1/projects/flag-proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent Bearer ya29.cli"},
		{[]string{"run", "--provider", "azure", "--deployment", "gpt4o", "--api-version", "2024-10-21", "--base-url", srv.URL, "hi"}, "from azure\n",
			"/openai/deployments/gpt4o/chat/completions Bearer entra.cli"},
	} {
		var out, errb bytes.Buffer
		a := newApp(strings.NewReader(""), &out, &errb, func(string) string { return "" })
		a.ext = ext
		mu.Lock()
		before := len(seen)
		mu.Unlock()
		if code := a.main(c.args); code != exitOK || out.String() != c.out {
			t.Fatalf("runlet %v: exit %d\n%s\n%s", c.args, code, out.String(), errb.String())
		}
		mu.Lock()
		if len(seen) != before+1 || seen[before] != c.wantR {
			t.Errorf("runlet %v: requests %q, want %q", c.args, seen[before:], c.wantR)
		}
		mu.Unlock()
	}
}

// TestCloudCommandInAClone runs the suggestion the messages make for a
// clone of the repository ("cd DIR && go run PKG") far enough to see it
// names a main package: `go run` of the cloud command's import path from
// the main module, which they said before, finds no such package.
func TestCloudCommandInAClone(t *testing.T) {
	cd, rest, ok := strings.Cut(cloudCommand, " && go run ")
	dir, hasCd := strings.CutPrefix(cd, "cd ")
	if !ok || !hasCd {
		t.Fatalf("cloudCommand %q: want it to start with cd DIR && go run PKG", cloudCommand)
	}
	pkg, _, _ := strings.Cut(rest, " ")
	cmd := exec.Command("go", "list", "-f", "{{.Name}}", pkg)
	cmd.Dir = filepath.Join("..", "..", dir) // from internal/cli to the repository's root
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "main" {
		t.Fatalf("(cd %s && go list %s): %v\n%s", dir, pkg, err, out)
	}
}
