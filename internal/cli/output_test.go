package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// --output-schema: the answer is validated (an invalid one is asked for
// again) and only the final JSON reaches stdout.
func TestOutputSchemaFlag(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer()
	defer srv.Close()
	srv.EnqueueReplies(runlettest.WireReply{Text: `Here: {"name":"Ada"}`}, runlettest.WireReply{Text: `{"name":"Ada","age":36}`})
	schema := filepath.Join(t.TempDir(), "contact.json")
	if err := os.WriteFile(schema, []byte(`{"title":"contact","type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", nil, "run", "--base-url", srv.BaseURL(), "--model", "m", "--output-schema", schema, "Ada Lovelace, 36")
	if r.code != 0 || r.stdout != `{"name":"Ada","age":36}`+"\n" {
		t.Fatalf("%s", r)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"name":"contact"`) {
		t.Errorf("request %s", srv.Requests()[0].Body)
	}

	r = runCLI(t, "", nil, "run", "--base-url", srv.BaseURL(), "--model", "m", "--output-schema", filepath.Join(t.TempDir(), "missing.json"), "x")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--output-schema") {
		t.Fatalf("missing file: %s", r)
	}
}

// Offline (no model configured), flags the recording cannot answer are
// refused before any call, with how to go live.
func TestOfflineRefusesWhatItCannotAnswer(t *testing.T) {
	schema := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--output-schema", schema, "x"},
		{"chat", "--output-schema", schema},
		{"run", "--record", filepath.Join(t.TempDir(), "c.json"), "x"},
	} {
		r := runCLI(t, "hi\n", nil, args...)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "needs a live model") ||
			!strings.Contains(r.stderr, "OPENAI_API_KEY") || strings.Contains(r.stderr, "REPLAY") {
			t.Errorf("%v: %s", args, r)
		}
	}
}
