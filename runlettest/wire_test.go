package runlettest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// Every fake server scripts the same way: queued answers, then the
// responder, and RequireAPIKey guards them all.
func TestServersShareScripting(t *testing.T) {
	chat := runlettest.NewOpenAIChatServer(runlettest.OpenAIChatReply{Text: "queued"})
	chat.SetResponder(func(runlettest.WireRequest) runlettest.OpenAIChatReply {
		return runlettest.OpenAIChatReply{Text: "responder"}
	})
	resp := runlettest.NewOpenAIResponsesServer(runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("queued")}})
	resp.SetResponder(func(runlettest.WireRequest) runlettest.ResponsesTurn {
		return runlettest.ResponsesTurn{Items: []runlettest.ResponsesItem{runlettest.ResponsesText("responder")}}
	})
	anth := runlettest.NewAnthropicServer(runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("queued")}})
	anth.SetResponder(func(runlettest.WireRequest) runlettest.AnthropicResponse {
		return runlettest.AnthropicResponse{Content: []runlettest.AnthropicBlock{runlettest.AnthropicText("responder")}}
	})
	defer chat.Close()
	defer resp.Close()
	defer anth.Close()

	cases := []struct {
		name, url, body string
		auth            func(*http.Request, string)
		require         func(string)
	}{
		{"chat", chat.BaseURL() + "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			func(r *http.Request, k string) { r.Header.Set("Authorization", "Bearer "+k) }, chat.RequireAPIKey},
		{"responses", resp.BaseURL() + "/responses", `{"model":"m","input":"hi"}`,
			func(r *http.Request, k string) { r.Header.Set("Authorization", "Bearer "+k) }, resp.RequireAPIKey},
		{"anthropic", anth.URL + "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			func(r *http.Request, k string) {
				r.Header.Set("x-api-key", k)
				r.Header.Set("anthropic-version", "2023-06-01")
			}, anth.RequireAPIKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			post := func(key string) (int, string) {
				req, _ := http.NewRequest(http.MethodPost, tc.url, strings.NewReader(tc.body))
				req.Header.Set("Content-Type", "application/json")
				tc.auth(req, key)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b)
			}
			for _, want := range []string{"queued", "responder", "responder"} {
				if code, body := post("k"); code != 200 || !strings.Contains(body, want) {
					t.Fatalf("want %q: %d %s", want, code, body)
				}
			}
			tc.require("k")
			if code, _ := post("wrong"); code != http.StatusUnauthorized {
				t.Fatalf("wrong key: %d", code)
			}
			if code, _ := post("k"); code != 200 {
				t.Fatalf("right key: %d", code)
			}
		})
	}
}
