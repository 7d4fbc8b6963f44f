package runlettest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

func geminiPost(t *testing.T, srv *runlettest.GeminiServer, path, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const geminiUser = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`

func TestGeminiServerValidates(t *testing.T) {
	srv := runlettest.NewGeminiServer()
	defer srv.Close()
	srv.RequireAPIKey("k")
	key := http.Header{"X-Goog-Api-Key": {"k"}}
	for _, tc := range []struct {
		path, body string
		header     http.Header
		status     int
		want       string
	}{
		{"/v1beta/models/gemini-3-pro-preview:generateContent", geminiUser, nil, 401, `"status":"UNAUTHENTICATED"`},
		{"/v1beta/models/gemini-3-pro-preview:count", geminiUser, key, 404, `"status":"NOT_FOUND"`},
		{"/v1beta/models/gemini-3-pro-preview:generateContent", `{}`, key, 400, "contents is not specified"},
		{"/v1beta/models/gemini-3-pro-preview:streamGenerateContent", geminiUser, key, 400, "alt=sse"},
		{"/v1beta/models/gemini-3-pro-preview:generateContent?key=k", geminiUser, nil, 500, "no scripted response"},
		{"/v1beta/models/gemini-3-pro-preview:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},
			{"role":"model","parts":[{"functionCall":{"name":"f"}}]}]}`, key, 400, "missing a thought_signature"},
		{"/v1beta/models/gemini-3-pro-preview:generateContent", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"},"thoughtSignature":"forged"}]}]}`, key, 400, "Corrupted thought signature"},
	} {
		status, body := geminiPost(t, srv, tc.path, tc.body, tc.header)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, status, body)
		}
	}
}

func TestGeminiServerJSONAndSignatures(t *testing.T) {
	srv := runlettest.NewGeminiServer(runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{
		runlettest.GeminiThought("hmm", "th1"), runlettest.GeminiText("Let me look."),
		runlettest.GeminiCall("", "get_weather", `{"city":"Paris"}`), runlettest.GeminiCall("c2", "get_time", ""),
	}})
	defer srv.Close()
	srv.EnqueueReplies(runlettest.WireReply{Text: "done"}, runlettest.WireReply{Text: "old"})
	status, body := geminiPost(t, srv, "/v1beta/models/gemini-3-pro-preview:generateContent", geminiUser, nil)
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text             string          `json:"text"`
					Thought          bool            `json:"thought"`
					FunctionCall     json.RawMessage `json:"functionCall"`
					ThoughtSignature string          `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		UsageMetadata map[string]int `json:"usageMetadata"`
		ModelVersion  string         `json:"modelVersion"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	parts := r.Candidates[0].Content.Parts
	if len(parts) != 4 || !parts[0].Thought || parts[0].ThoughtSignature != "th1" || parts[2].ThoughtSignature == "" || parts[3].ThoughtSignature != "" ||
		string(parts[3].FunctionCall) != `{"id":"c2","name":"get_time"}` || r.Candidates[0].FinishReason != "STOP" ||
		r.ModelVersion != "gemini-3-pro-preview" || r.UsageMetadata["promptTokenCount"] == 0 {
		t.Fatalf("%s", body)
	}
	// The issued signature is accepted on the next turn, byte for byte.
	next := `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"get_weather"},"thoughtSignature":"` +
		parts[2].ThoughtSignature + `"}]}]}`
	if status, body := geminiPost(t, srv, "/v1beta/models/gemini-3-pro-preview:generateContent", next, nil); status != 200 || !strings.Contains(body, "done") {
		t.Fatalf("%d %s", status, body)
	}
	// Gemini 2.x does not validate signatures.
	old := `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}}]}]}`
	if status, body := geminiPost(t, srv, "/v1beta/models/gemini-2.5-flash:generateContent", old, nil); status != 200 || strings.Contains(body, "thoughtSignature") {
		t.Fatalf("%d %s", status, body)
	}
}

func TestGeminiServerStream(t *testing.T) {
	srv := runlettest.NewGeminiServer(runlettest.GeminiResponse{ChunkSize: 3, Parts: []runlettest.GeminiPart{
		runlettest.GeminiThought("thinking", "th1"), {Text: "Hello!", Signature: "tx1"},
	}}, runlettest.GeminiResponse{Parts: []runlettest.GeminiPart{runlettest.GeminiText("partial")}, Error: &runlettest.WireError{Status: 503, Message: "overloaded"}, ErrorAfter: 1})
	defer srv.Close()
	_, body := geminiPost(t, srv, "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse", geminiUser, nil)
	var texts []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			texts = append(texts, d)
		}
	}
	// thinking in 3 chunks (signature on the last), text in 2, its signature
	// on an empty part, then the finish chunk.
	if len(texts) != 7 || !strings.Contains(texts[2], `"thought":true,"thoughtSignature":"th1"`) || strings.Contains(texts[1], "th1") ||
		!strings.Contains(texts[5], `{"text":"","thoughtSignature":"tx1"}`) || !strings.Contains(texts[6], `"finishReason":"STOP"`) {
		t.Fatalf("%d events:\n%s", len(texts), strings.Join(texts, "\n"))
	}
	_, body = geminiPost(t, srv, "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse", geminiUser, nil)
	if !strings.Contains(body, `"text":"part"`) || !strings.Contains(body, `data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`) {
		t.Fatalf("%s", body)
	}
}
