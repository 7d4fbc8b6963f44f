package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/runlet/runlet"
)

// Conformance on recorded Gemini API traffic (testdata/SOURCES.md).

// recorded reads the first candidate's parts of a recorded response.
func recordedParts(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []map[string]any `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Candidates) == 0 {
		t.Fatalf("fixture: %v", err)
	}
	return r.Candidates[0].Content.Parts
}

// generateFixture answers one generateContent call with a recorded body.
func generateFixture(t *testing.T, name string) (*runlet.ModelResponse, error) {
	t.Helper()
	body := fixture(t, name)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	return newTestModel(srv.URL, Config{}).Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("hi")}})
}

func TestRecordedTextWithSignature(t *testing.T) {
	name := "vercel-nonstream-text-signature.response.json"
	resp, err := generateFixture(t, name)
	if err != nil {
		t.Fatal(err)
	}
	p := recordedParts(t, fixture(t, name))[0]
	want := runlet.Message{Role: runlet.RoleAssistant, Parts: []runlet.Part{
		runlet.TextPart{Text: p["text"].(string), Signature: p["thoughtSignature"].(string), Provider: "gemini"},
	}}
	if !reflect.DeepEqual(resp.Message, want) {
		t.Errorf("message %+v", resp.Message)
	}
	wantUsage := runlet.Usage{InputTokens: 9, OutputTokens: 28 + 244, TotalTokens: 281, ReasoningTokens: 244, Requests: 1}
	if resp.Usage != wantUsage || resp.FinishReason != runlet.FinishStop || resp.ID != "Un6LacrVMcjUxs0PmJfWoQc" || resp.Model != "gemini-3-pro-preview" {
		t.Errorf("resp %+v", resp)
	}
}

func TestRecordedToolCallWithSignature(t *testing.T) {
	name := "vercel-nonstream-tool-call-signature.response.json"
	resp, err := generateFixture(t, name)
	if err != nil {
		t.Fatal(err)
	}
	sig := recordedParts(t, fixture(t, name))[0]["thoughtSignature"].(string)
	calls := resp.Message.ToolCalls()
	if len(calls) != 1 || calls[0].Name != "weather" || string(calls[0].Arguments) != `{"location":"San Francisco"}` ||
		calls[0].Signature != sig || calls[0].Provider != "gemini" || resp.FinishReason != runlet.FinishToolCalls {
		t.Errorf("resp %+v", resp)
	}
}

func TestRecordedThoughtParts(t *testing.T) {
	name := "pydantic-nonstream-thought-parts-gemini3.response.json"
	resp, err := generateFixture(t, name)
	if err != nil {
		t.Fatal(err)
	}
	rec := recordedParts(t, fixture(t, name))
	want := []runlet.Part{
		runlet.ReasoningPart{Text: rec[0]["text"].(string), Provider: "gemini"},
		runlet.TextPart{Text: rec[1]["text"].(string), Signature: rec[1]["thoughtSignature"].(string), Provider: "gemini"},
	}
	if !reflect.DeepEqual(resp.Message.Parts, want) {
		t.Errorf("parts %+v", resp.Message.Parts)
	}
	if resp.Usage.ReasoningTokens != 1001 || resp.Usage.OutputTokens != 736+1001 || resp.Usage.InputTokens != 29 {
		t.Errorf("usage %+v", resp.Usage)
	}
}

func TestRecordedSafetyBlockIsContentFilter(t *testing.T) {
	resp, err := generateFixture(t, "pydantic-nonstream-finish-safety.response.json")
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != runlet.FinishContentFilter || len(resp.Message.Parts) != 0 || resp.Usage.InputTokens != 14 {
		t.Errorf("resp %+v", resp)
	}
}

func TestRecordedStreamsRechunked(t *testing.T) {
	for _, tc := range []struct {
		name      string
		text      string
		calls     int
		finish    runlet.FinishReason
		usage     runlet.Usage
		signedIdx int // index of the part that must carry the last chunk's signature, -1 none
	}{
		{"vercel-stream-text.chunks.jsonl", "There are **3** \"r\"s in strawberry.\n\nst**r**awbe**rr**y", 0, runlet.FinishStop,
			runlet.Usage{InputTokens: 9, OutputTokens: 23 + 185, TotalTokens: 217, ReasoningTokens: 185, Requests: 1}, 0},
		{"vercel-stream-trailing-signature-part.chunks.jsonl", "", 0, runlet.FinishStop,
			runlet.Usage{InputTokens: 9, OutputTokens: 23 + 302, TotalTokens: 334, ReasoningTokens: 302, Requests: 1}, 0},
		{"vercel-stream-tool-call-signature.chunks.jsonl", "", 1, runlet.FinishToolCalls,
			runlet.Usage{InputTokens: 29, OutputTokens: 15 + 804, TotalTokens: 848, ReasoningTokens: 804, Requests: 1}, 0},
		{"pydantic-stream-tool-call-signature-gemini3.1.response.sse", "", 1, runlet.FinishToolCalls,
			runlet.Usage{InputTokens: 29, OutputTokens: 10 + 202, TotalTokens: 241, ReasoningTokens: 202, Requests: 1}, 0},
		{"pydantic-stream-tool-call-signature-gemini3.2.response.sse", "The capital of Mexico is Mexico City.", 0, runlet.FinishStop,
			runlet.Usage{InputTokens: 257, OutputTokens: 8, TotalTokens: 265, Requests: 1}, -1},
		{"pydantic-stream-thoughts-gemini25.response.sse", "", 0, runlet.FinishStop, runlet.Usage{}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestModel("http://unused", Config{})
			body := streamFixture(t, tc.name)
			deltas, resp, err := decodeStream(m, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			// The same bytes in reads of 1 to 7 bytes give the same result.
			deltas2, resp2, err := decodeStream(m, &smallReads{b: body})
			if err != nil || !reflect.DeepEqual(resp, resp2) || !reflect.DeepEqual(deltas, deltas2) {
				t.Fatalf("re-chunked stream differs: %v", err)
			}
			if tc.text != "" && resp.Message.Text() != tc.text {
				t.Errorf("text %q", resp.Message.Text())
			}
			if joined(deltas, runlet.StreamTextDelta) != resp.Message.Text() || joined(deltas, runlet.StreamReasoningDelta) != resp.Message.Reasoning() {
				t.Error("deltas do not add up to the response")
			}
			if len(resp.Message.ToolCalls()) != tc.calls || resp.FinishReason != tc.finish {
				t.Errorf("calls %d finish %s", len(resp.Message.ToolCalls()), resp.FinishReason)
			}
			if tc.usage != (runlet.Usage{}) && resp.Usage != tc.usage {
				t.Errorf("usage %+v", resp.Usage)
			}
			if tc.signedIdx >= 0 {
				var sig string
				switch p := resp.Message.Parts[tc.signedIdx].(type) {
				case runlet.TextPart:
					sig = p.Signature
				case runlet.ToolCallPart:
					sig = p.Signature
				}
				if sig == "" || !bytes.Contains(body, []byte(sig)) {
					t.Errorf("signature %q not kept as received", sig)
				}
				if len(resp.Message.Parts) != tc.signedIdx+1 {
					t.Errorf("parts %+v", resp.Message.Parts)
				}
			}
		})
	}
}

func TestRecordedStreamThoughts(t *testing.T) {
	m := newTestModel("http://unused", Config{})
	deltas, resp, err := decodeStream(m, bytes.NewReader(fixture(t, "pydantic-stream-thoughts-gemini25.response.sse")))
	if err != nil {
		t.Fatal(err)
	}
	parts := resp.Message.Parts
	if len(parts) != 2 {
		t.Fatalf("parts %+v", parts)
	}
	r, ok1 := parts[0].(runlet.ReasoningPart)
	text, ok2 := parts[1].(runlet.TextPart)
	// Gemini 2.5 signs the first chunk of the answer; the rest joins that part.
	if !ok2 || !bytes.HasPrefix([]byte(text.Signature), []byte("CiIB0e2Kb6Syj1a961Ef")) || !bytes.HasSuffix([]byte(text.Text), []byte("be predictable**. Always assume a driver might not see you.")) {
		t.Errorf("text part %+v", parts[1])
	}
	if !ok1 || r.Text == "" || r.Provider != "gemini" || joined(deltas, runlet.StreamReasoningDelta) != r.Text {
		t.Errorf("parts %+v", parts)
	}
	if resp.Usage.ReasoningTokens == 0 || resp.Model != "gemini-2.5-pro" {
		t.Errorf("resp %+v", resp)
	}
}

// TestRecordedToolLoopNextRequest replays the recorded Gemini 3 tool loop:
// the second request must carry the function call's signature exactly as
// the first response sent it, on the function call part.
func TestRecordedToolLoopNextRequest(t *testing.T) {
	m := newTestModel("http://unused", Config{})
	_, resp, err := decodeStream(m, bytes.NewReader(fixture(t, "pydantic-stream-tool-call-signature-gemini3.1.response.sse")))
	if err != nil {
		t.Fatal(err)
	}
	call := resp.Message.ToolCalls()[0]
	call.ID = "pyd_ai_29bf73b69e02448588e15893d47a3e7e" // the ID pydantic-ai gave the call
	resp.Message.Parts[0] = call
	req := &runlet.ModelRequest{
		Messages: []runlet.Message{
			runlet.UserText("What is the capital of the user country? Call the tool"),
			resp.Message,
			{Role: runlet.RoleTool, Parts: []runlet.Part{runlet.ToolResultPart{CallID: call.ID, Content: "Mexico"}}},
		},
	}
	_, body, err := m.buildRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	var got, rec struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall     map[string]any `json:"functionCall"`
				FunctionResponse map[string]any `json:"functionResponse"`
				ThoughtSignature string         `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fixture(t, "pydantic-stream-tool-call-signature-gemini3.2.request.json"), &rec); err != nil {
		t.Fatal(err)
	}
	if len(got.Contents) != 3 || got.Contents[1].Role != "model" || got.Contents[2].Role != "user" {
		t.Fatalf("contents %s", body)
	}
	g, r := got.Contents[1].Parts[0], rec.Contents[1].Parts[0]
	if g.ThoughtSignature != call.Signature || !bytes.Contains(fixture(t, "pydantic-stream-tool-call-signature-gemini3.1.response.sse"), []byte(`"thoughtSignature": "`+g.ThoughtSignature+`"`)) {
		t.Errorf("signature not sent back byte-exact: %q", g.ThoughtSignature)
	}
	// pydantic-ai re-encoded the signature (URL-safe base64); the bytes are the same.
	gb, err1 := base64.StdEncoding.DecodeString(g.ThoughtSignature)
	rb, err2 := base64.URLEncoding.DecodeString(r.ThoughtSignature)
	if err1 != nil || err2 != nil || !bytes.Equal(gb, rb) {
		t.Errorf("signature bytes differ from the recorded request: %v %v", err1, err2)
	}
	if !reflect.DeepEqual(g.FunctionCall, r.FunctionCall) {
		t.Errorf("functionCall %v, recorded %v", g.FunctionCall, r.FunctionCall)
	}
	fr := got.Contents[2].Parts[0].FunctionResponse
	if fr["id"] != call.ID || fr["name"] != "get_country" || !reflect.DeepEqual(fr["response"], map[string]any{"output": "Mexico"}) {
		t.Errorf("functionResponse %v", fr)
	}
}
