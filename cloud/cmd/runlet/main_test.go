package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

// bin is the cloud build of runlet, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runlet-cloud-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "runlet")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary with args and only the environment given (plus
// PATH and a fresh HOME), so no credential of the machine is found.
func run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	home := t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CACHE_HOME=" + home,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none"),
		"GCE_METADATA_HOST=127.0.0.1:1"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestBedrock: --provider bedrock signs with the AWS credentials of the
// environment (the fake Bedrock recomputes the signature).
func TestBedrock(t *testing.T) {
	srv := bedrocktest.NewServer(runlettest.WireReply{Text: "from bedrock"})
	defer srv.Close()
	out, errb, code := run(t, []string{"AWS_ACCESS_KEY_ID=" + bedrocktest.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + bedrocktest.SecretAccessKey,
		"AWS_REGION=" + bedrocktest.Region},
		"run", "--provider", "bedrock", "--model", "amazon.nova-pro-v1:0", "--base-url", srv.URL, "hi")
	if code != 0 || out != "from bedrock\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
}

// TestVertex: --provider vertex gets a token from Application Default
// Credentials (an authorized user whose token endpoint is fake) and sends
// it to Vertex AI's URL for the project of $GOOGLE_CLOUD_PROJECT.
func TestVertex(t *testing.T) {
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"ya29.cli-token","expires_in":3600,"token_type":"Bearer"}`)
	}))
	defer tokens.Close()
	var mu sync.Mutex
	var seen []string
	vertex := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"from vertex\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n")
	}))
	defer vertex.Close()
	adc := filepath.Join(t.TempDir(), "adc.json")
	b, _ := json.Marshal(map[string]string{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": tokens.URL})
	os.WriteFile(adc, b, 0o600)
	out, errb, code := run(t, []string{"GOOGLE_APPLICATION_CREDENTIALS=" + adc, "GOOGLE_CLOUD_PROJECT=cli-proj", "GOOGLE_CLOUD_LOCATION=us-central1"},
		"run", "--provider", "vertex", "--model", "gemini-2.5-flash", "--base-url", vertex.URL, "hi")
	if code != 0 || out != "from vertex\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errb)
	}
	want := "/v1/projects/cli-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent Bearer ya29.cli-token"
	if len(seen) != 1 || seen[0] != want {
		t.Fatalf("Vertex saw %q, want %q", seen, want)
	}

	// No credentials: the error names the source tried.
	missing := filepath.Join(t.TempDir(), "missing.json")
	_, errb, code = run(t, []string{"GOOGLE_APPLICATION_CREDENTIALS=" + missing, "GOOGLE_CLOUD_PROJECT=p"},
		"run", "--provider", "vertex", "hi")
	if code != 2 || !strings.Contains(errb, "$GOOGLE_APPLICATION_CREDENTIALS ("+missing+")") {
		t.Fatalf("missing credentials: exit %d\n%s", code, errb)
	}
}

// TestBedrockWithoutModel: Bedrock has no default model, and the message
// says what to pass for Bedrock (a model ID or inference profile), not an
// Ollama model.
func TestBedrockWithoutModel(t *testing.T) {
	_, errb, code := run(t, []string{"AWS_REGION=us-east-1"}, "run", "--provider", "bedrock", "hi")
	if code != 2 || !strings.Contains(errb, "pass --model (a Bedrock model ID or inference profile, such as us.amazon.nova-micro-v1:0)") {
		t.Fatalf("exit %d\n%s", code, errb)
	}
}
