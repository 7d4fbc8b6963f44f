package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
