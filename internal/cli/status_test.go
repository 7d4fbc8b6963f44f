package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// Every provider error names its HTTP status one way, "HTTP 404" as
// "HTTP 401", whatever the adapter and the error's envelope, and whether
// the status came as the response's or inside a stream with status 200
// (a numeric code: Google, OpenRouter); the hint follows the status.
func TestProviderErrorsNameTheirStatus(t *testing.T) {
	openaiBody := `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`
	tests := []struct {
		name     string
		args     []string
		status   int // of the response
		ctype    string
		body     string
		want     string // "HTTP nnn"
		hint     string
		notWants []string
	}{
		{"openai 404", []string{"--provider", "openai"}, 404, "application/json", openaiBody, "HTTP 404", "check the model name", nil},
		{"openai 401", []string{"--provider", "openai"}, 401, "application/json", `{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "HTTP 401", "check the API key", nil},
		{"openai-responses 404", []string{"--provider", "openai-responses"}, 404, "application/json", openaiBody, "HTTP 404", "check the model name", nil},
		{"openai-responses 401", []string{"--provider", "openai-responses"}, 401, "application/json", `{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "HTTP 401", "check the API key", nil},
		{"anthropic 404", []string{"--provider", "anthropic"}, 404, "application/json", `{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, "HTTP 404", "check the model name", nil},
		{"anthropic 401", []string{"--provider", "anthropic"}, 401, "application/json", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, "HTTP 401", "check the API key", nil},
		{"gemini 404", []string{"--provider", "gemini"}, 404, "application/json", `{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}`, "HTTP 404", "check the model name", []string{"(404)"}},
		{"gemini 401", []string{"--provider", "gemini"}, 401, "application/json", `{"error":{"code":401,"message":"API key not valid","status":"UNAUTHENTICATED"}}`, "HTTP 401", "check the API key", []string{"(401)"}},
		{"ollama 404, plain text", []string{"--provider", "openai"}, 404, "text/plain", "404 page not found", "HTTP 404", "check the model name", nil},
		// A numeric code is the status: "HTTP 404 No endpoints found", not "HTTP 404 (404) ...".
		{"openrouter 404, numeric code", []string{"--provider", "openai"}, 404, "application/json", `{"error":{"message":"No endpoints found","code":404}}`, "HTTP 404", "check the model name", []string{"(404)"}},
		// Inside a stream, with status 200: the status the error names.
		{"openai stream error", []string{"--provider", "openai"}, 200, "text/event-stream", "data: {\"error\":{\"message\":\"No endpoints found\",\"code\":404}}\n\n", "HTTP 404", "check the model name", []string{"(404)"}},
		{"gemini stream error", []string{"--provider", "gemini"}, 200, "text/event-stream", "data: {\"error\":{\"code\":401,\"message\":\"API key not valid\",\"status\":\"UNAUTHENTICATED\"}}\n\n", "HTTP 401", "check the API key", []string{"(401)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			args := append([]string{"run"}, tt.args...)
			args = append(args, "--base-url", srv.URL+"/v1", "--model", "x", "hi")
			r := runCLI(t, "", []string{"OPENAI_API_KEY=k", "ANTHROPIC_API_KEY=k", "GEMINI_API_KEY=k"}, args...)
			if r.code != exitFailed || strings.Count(r.stderr, tt.want) != 1 || !strings.Contains(r.stderr, tt.hint) {
				t.Fatalf("want %q once and %q\n%s", tt.want, tt.hint, r)
			}
			for _, bad := range tt.notWants {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("stderr has %q\n%s", bad, r)
				}
			}
		})
	}
}

// The Azure and Gemini presets from the command line: Azure's key in the
// api-key header, its resource endpoint made the v1 root, the model the
// deployment; Gemini's key as a bearer token. Azure without a base URL is
// refused before any call.
func TestPresetsFromTheCommandLine(t *testing.T) {
	srv := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "from azure"}, runlettest.OpenAIChatReply{Text: "from gemini"})
	defer srv.Close()
	r := runCLI(t, "", []string{"AZURE_OPENAI_API_KEY=az-key"}, "run", "--provider", "azure", "--base-url", srv.URL, "--model", "my-deployment", "hi")
	if r.code != 0 || r.stdout != "from azure\n" {
		t.Fatalf("%s", r)
	}
	req := srv.Requests()[0]
	if req.Path != "/openai/v1/chat/completions" || req.Header.Get("Api-Key") != "az-key" || req.Header.Get("Authorization") != "" ||
		req.JSON()["model"] != "my-deployment" {
		t.Errorf("azure request %s %v %s", req.Path, req.Header, req.Body)
	}
	r = runCLI(t, "", []string{"GEMINI_API_KEY=gem-key"}, "run", "--provider", "gemini-openai", "--base-url", srv.URL+"/v1beta/openai", "--model", "gemini-2.5-flash", "hi")
	if r.code != 0 || r.stdout != "from gemini\n" {
		t.Fatalf("%s", r)
	}
	if req := srv.Requests()[1]; req.Path != "/v1beta/openai/chat/completions" || req.Header.Get("Authorization") != "Bearer gem-key" {
		t.Errorf("gemini-openai request %s %v", req.Path, req.Header)
	}

	r = runCLI(t, "", []string{"AZURE_OPENAI_API_KEY=az-key"}, "run", "--provider", "azure", "--model", "d", "hi")
	if r.code != exitUsage || !strings.Contains(r.stderr, "provider azure has no base URL: export AZURE_OPENAI_ENDPOINT=") || len(srv.Requests()) != 2 {
		t.Errorf("azure without a base URL: %s", r)
	}
	r = runCLI(t, "", nil, "run", "--provider", "azure", "--base-url", srv.URL, "hi")
	if r.code != exitUsage || !strings.Contains(r.stderr, "the name of your deployment") {
		t.Errorf("azure without a model: %s", r)
	}
}
