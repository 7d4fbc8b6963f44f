package gemini

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet"
)

const okChunk = `{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2},"responseId":"r1"}`

func TestRecordedRetryInfoError(t *testing.T) {
	body := fixture(t, "vercel-error-429-retry-info.response.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(429)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	m := newTestModel(srv.URL, Config{MaxRetries: -1})
	_, err := m.Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}})
	pe := requireProviderError(t, err)
	if pe.StatusCode != 429 || pe.Code != "RESOURCE_EXHAUSTED" || !pe.Retryable || pe.RetryAfter != 34400*time.Millisecond ||
		pe.Message != "You exceeded your current quota, please check your plan." || pe.Provider != "gemini" {
		t.Errorf("%+v", pe)
	}
}

// A 429 or 503 with a short RetryInfo delay is retried, for Generate and
// for a stream that failed before its first delta; the array-wrapped
// envelope is read too.
func TestRetriesHonourRetryInfo(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var n atomic.Int32
		var gaps []time.Duration
		last := time.Now()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gaps = append(gaps, time.Since(last))
			last = time.Now()
			switch n.Add(1) {
			case 1:
				w.WriteHeader(429)
				_, _ = io.WriteString(w, `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.05s"}]}}`)
			case 2:
				w.WriteHeader(503)
				_, _ = io.WriteString(w, `[{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}]`)
			default:
				if stream {
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = io.WriteString(w, "data: "+okChunk+"\r\n\r\n")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, okChunk)
			}
		}))
		m := newTestModel(srv.URL, Config{})
		req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}}
		var resp *runlet.ModelResponse
		var err error
		if stream {
			_, resp, err = collect(t, m.Stream(ctxTimeout(t), req))
		} else {
			resp, err = m.Generate(ctxTimeout(t), req)
		}
		srv.Close()
		if err != nil || resp.Message.Text() != "ok" || n.Load() != 3 {
			t.Fatalf("stream=%v: %v %+v after %d requests", stream, err, resp, n.Load())
		}
		if gaps[1] < 50*time.Millisecond {
			t.Errorf("stream=%v: retried after %v, RetryInfo asked for 50ms", stream, gaps[1])
		}
	}
}

func TestErrorsAreTyped(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		check      func(*runlet.ProviderError) bool
	}{
		{"malformed function call", `{"candidates":[{"content":{},"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"Malformed function call: print(x","index":0}]}`,
			func(e *runlet.ProviderError) bool {
				return errors.Is(e, ErrMalformedFunctionCall) && e.Code == "MALFORMED_FUNCTION_CALL" && e.Retryable && strings.Contains(e.Message, "print(x")
			}},
		{"error in stream", `{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`,
			func(e *runlet.ProviderError) bool {
				return e.Code == "INTERNAL" && e.Retryable && e.Message == "An internal error has occurred."
			}},
		{"html", `<html>oops</html>`, func(e *runlet.ProviderError) bool { return errors.Is(e, runlet.ErrMalformedStream) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(r.URL.RawQuery, "alt=sse") {
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = io.WriteString(w, "data: "+tc.body+"\n\n")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			m := newTestModel(srv.URL, Config{MaxRetries: -1})
			req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}}
			_, err := m.Generate(ctxTimeout(t), req)
			if tc.name != "error in stream" {
				if pe := requireProviderError(t, err); !tc.check(pe) {
					t.Errorf("generate: %+v", pe)
				}
			}
			_, _, err = collect(t, m.Stream(ctxTimeout(t), req))
			if pe := requireProviderError(t, err); !tc.check(pe) {
				t.Errorf("stream: %+v", pe)
			}
		})
	}
}

func TestPromptBlockedIsContentFilter(t *testing.T) {
	m := newTestModel("http://unused", Config{})
	_, resp, err := decodeStream(m, strings.NewReader(`data: {"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}}`+"\n\n"))
	if err != nil || resp.FinishReason != runlet.FinishContentFilter || len(resp.Message.Parts) != 0 || resp.Usage.InputTokens != 7 {
		t.Fatalf("%v %+v", err, resp)
	}
}

func TestStreamIncomplete(t *testing.T) {
	m := newTestModel("http://unused", Config{})
	for _, body := range []string{
		"",
		`data: {"candidates":[{"content":{"parts":[{"text":"half"}],"role":"model"},"index":0}]}` + "\n\n",
		`data: {"candidates":[{"content":{"parts":[{"text":"cut`,
	} {
		_, _, err := decodeStream(m, strings.NewReader(body))
		if pe := requireProviderError(t, err); !errors.Is(err, runlet.ErrStreamIncomplete) || !pe.Retryable {
			t.Errorf("%q: %v", body, err)
		}
	}
	_, _, err := decodeStream(m, strings.NewReader("data: {bad\n\ndata: "+okChunk+"\n\n"))
	if !errors.Is(err, runlet.ErrMalformedStream) {
		t.Errorf("malformed event: %v", err)
	}
}

func TestStreamAnsweredWithJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixture(t, "vercel-nonstream-tool-call-signature.response.json"))
	}))
	defer srv.Close()
	deltas, resp, err := collect(t, newTestModel(srv.URL, Config{}).Stream(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}}))
	if err != nil || len(deltas) != 1 || deltas[0].Name != "weather" || resp.Message.ToolCalls()[0].Signature == "" {
		t.Fatalf("%v %+v %+v", err, deltas, resp)
	}
}

func TestConfig(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "google-key")
	for _, tc := range []struct {
		cfg       Config
		base, key string
	}{
		{Config{}, DefaultBaseURL, "google-key"},
		{Config{APIKey: "k1", BaseURL: "https://generativelanguage.googleapis.com/"}, "https://generativelanguage.googleapis.com/v1beta", "k1"},
		{Config{BaseURL: "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google",
			Headers: http.Header{"authorization": {"Bearer tok"}}},
			"https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google", ""},
	} {
		r := tc.cfg.resolve()
		if r.base != tc.base || r.client.Header.Get("X-Goog-Api-Key") != tc.key || r.name != "gemini" {
			t.Errorf("%+v: %+v %v", tc.cfg, r, r.client.Header)
		}
	}
	t.Setenv("GEMINI_API_KEY", "gemini-key")
	if k := (Config{}).resolve().client.Header.Get("X-Goog-Api-Key"); k != "gemini-key" {
		t.Errorf("key %q", k)
	}
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, okChunk)
	}))
	defer srv.Close()
	m := newTestModel(srv.URL+"/v1", Config{Headers: http.Header{"X-Extra": {"1"}}})
	if _, err := m.Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}}); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-Goog-Api-Key") != testKey || got.Get("X-Extra") != "1" || !bytes.HasPrefix([]byte(got.Get("Content-Type")), []byte("application/json")) {
		t.Errorf("headers %v", got)
	}
}

// A base URL's query (a proxy's, say) stays after the path, beside the
// stream's alt=sse (httpc.JoinURL), with or without a path in the base.
func TestBaseURLQueryKept(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, okChunk)
	}))
	defer srv.Close()
	for _, base := range []string{srv.URL + "?tenant=a", srv.URL + "/v1beta/?tenant=a"} {
		m := New(Config{BaseURL: base, APIKey: "k", Model: "gemini-2.5-flash", MaxRetries: -1})
		if _, err := m.Generate(ctxTimeout(t), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	want := "/v1beta/models/gemini-2.5-flash:generateContent?tenant=a"
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("requests %q, want %q twice", got, want)
	}
}
