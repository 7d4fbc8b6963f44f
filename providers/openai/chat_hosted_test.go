package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/openapitest"
)

// Hosted web search in Chat Completions against recorded traffic in
// testdata/chat/hosted (see its PROVENANCE.md).

func chatHostedFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/chat/hosted", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chatHostedServe answers every request with body and records the
// requests' bodies.
func chatHostedServe(t *testing.T, contentType string, body []byte) (string, *[][]byte) {
	t.Helper()
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		buf.ReadFrom(r.Body)
		bodies = append(bodies, buf.Bytes())
		rw.Header().Set("Content-Type", contentType)
		rw.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &bodies
}

// The request pydantic-ai recorded for gpt-4o-search-preview, and
// OpenRouter's own web search tool passed through, are what the adapter
// writes for a HostedTool.
func TestChatHostedRequests(t *testing.T) {
	for _, tt := range []struct {
		fixture, preset, model string
		hosted                 runlet.HostedTool
		req                    *runlet.ModelRequest
	}{
		{"pydantic-web-search-options", "", "gpt-4o-search-preview",
			runlet.HostedTool{Kind: runlet.HostedWebSearch, Options: map[string]any{"search_context_size": "low"}},
			&runlet.ModelRequest{Instructions: "You are a helpful assistant.", Messages: []runlet.Message{runlet.UserText("What day is today?")}}},
		{"pydantic-openrouter-web-search", "openrouter", "deepseek/deepseek-chat",
			runlet.HostedTool{Provider: "openrouter", Declaration: json.RawMessage(`{"type":"openrouter:web_search","parameters":{"max_uses":1,"search_context_size":"medium"}}`)},
			&runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("Use web search to find Pydantic AI's GitHub repository and answer with its URL only.")}}},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			url, bodies := chatHostedServe(t, "application/json", chatHostedFixture(t, tt.fixture+".response.json"))
			cfg := Config{APIKey: "k", BaseURL: url, Model: tt.model, MaxRetries: -1}
			if tt.preset != "" {
				cfg = Presets[tt.preset].Config(tt.model)
				cfg.APIKey, cfg.BaseURL = "k", url
			}
			tt.req.HostedTools = []runlet.HostedTool{tt.hosted, {Provider: "anthropic", Declaration: json.RawMessage(`{"type":"web_fetch_20250910"}`)}}
			if _, err := NewChatCompletions(cfg).Generate(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			_ = json.Unmarshal((*bodies)[0], &got)
			_ = json.Unmarshal(chatHostedFixture(t, tt.fixture+".request.json"), &want)
			delete(want, "stream") // pydantic-ai sends "stream": false; the adapter leaves it out
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body\n %v\nrecorded\n %v", got, want)
			}
			if tt.preset == "" {
				openapitest.Validate(t, "CreateChatCompletionRequest", (*bodies)[0])
			}
		})
	}
}

// Code execution and URL fetch are not offered: an ErrInvalidRequest.
// Another provider's hosted tool part in the history goes as text (it used
// to fail the request), its citations dropped.
func TestChatHostedDowngrade(t *testing.T) {
	url, bodies := chatHostedServe(t, "application/json", chatHostedFixture(t, "pydantic-web-search-options.response.json"))
	m := NewChatCompletions(Config{APIKey: "k", BaseURL: url, Model: "gpt-4o", MaxRetries: -1})
	for _, k := range []runlet.HostedToolKind{runlet.HostedCodeExecution, runlet.HostedWebFetch} {
		_, err := m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}, HostedTools: []runlet.HostedTool{{Kind: k}}})
		if !errors.Is(err, runlet.ErrInvalidRequest) {
			t.Errorf("%s: %v", k, err)
		}
	}
	hosted := runlet.HostedToolPart{ID: "ws_1", Kind: runlet.HostedWebSearch, Name: "web_search_call", Input: json.RawMessage(`{"query":"q"}`),
		Sources: []runlet.Citation{{URL: "https://a.example", Title: "A"}}, Provider: "openai", Raw: json.RawMessage(`[{"type":"web_search_call"}]`)}
	_, err := m.Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{
		runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{hosted, runlet.TextPart{Text: "A says so.", Citations: []runlet.Citation{{URL: "https://a.example", Provider: "openai", Raw: json.RawMessage(`{"type":"url_citation"}`)}}}}},
		runlet.UserText("more"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	openapitest.Validate(t, "CreateChatCompletionRequest", (*bodies)[0])
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	_ = json.Unmarshal((*bodies)[0], &body)
	if got := body.Messages[1]["content"]; got != hosted.Text()+"\nA says so." {
		t.Errorf("assistant content %q", got)
	}
	if strings.Contains(string((*bodies)[0]), "annotations") {
		t.Error("citations sent")
	}
}

// OpenRouter's recorded web search, streamed and not: the url_citation
// annotations become citations of the answer (no span: the whole text),
// and usage.server_tool_use_details.web_search_requests is counted.
func TestChatHostedCitations(t *testing.T) {
	for _, tt := range []struct {
		file, contentType string
		stream            bool
	}{
		{"pydantic-openrouter-web-search.response.json", "application/json", false},
		{"pydantic-openrouter-stream-web-search.response.sse", "text/event-stream", true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			body := chatHostedFixture(t, tt.file)
			url, _ := chatHostedServe(t, tt.contentType, body)
			m := NewChatCompletions(Config{APIKey: "k", BaseURL: url, Model: "deepseek/deepseek-chat", MaxRetries: -1})
			req := &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}}
			var resp *runlet.ModelResponse
			var err error
			if tt.stream {
				for ev, e := range m.Stream(context.Background(), req) {
					if e != nil {
						err = e
					}
					if ev.Kind == runlet.StreamDone {
						resp = ev.Response
					}
				}
			} else {
				resp, err = m.Generate(context.Background(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, line := range bytes.Split(body, []byte(`"url":"`))[1:] {
				urls = append(urls, string(line[:bytes.IndexByte(line, '"')]))
			}
			if !tt.stream {
				urls = nil
				var w struct {
					Choices []struct {
						Message struct {
							Annotations []chatAnnotation `json:"annotations"`
						} `json:"message"`
					} `json:"choices"`
				}
				_ = json.Unmarshal(body, &w)
				for _, a := range w.Choices[0].Message.Annotations {
					urls = append(urls, a.URLCitation.URL)
				}
			}
			text := resp.Message.Parts[len(resp.Message.Parts)-1].(runlet.TextPart)
			if len(urls) != 5 || len(text.Citations) != len(urls) || text.Text == "" {
				t.Fatalf("%d citations, recorded %d: %+v", len(text.Citations), len(urls), resp.Message.Parts)
			}
			for i, c := range text.Citations {
				if c.URL != urls[i] || c.Provider != "openai" || c.Start != 0 || c.End != 0 || c.Span(text.Text) != text.Text || !json.Valid(c.Raw) {
					t.Errorf("citation %d = %+v", i, c)
				}
			}
			if resp.Usage.WebSearchRequests != 1 {
				t.Errorf("usage %+v", resp.Usage)
			}
		})
	}
}

// The API's character indexes become byte offsets of the text.
func TestChatCitationOffsets(t *testing.T) {
	text := "Café ☕ news: Go 1.26 is out."
	ann := json.RawMessage(`[{"type":"url_citation","url_citation":{"start_index":13,"end_index":27,"url":"https://go.dev","title":"Go"}}]`)
	cs := chatCitations("openai", ann, text)
	if len(cs) != 1 || cs[0].Span(text) != "Go 1.26 is out" || cs[0].URL != "https://go.dev" || cs[0].Title != "Go" {
		t.Fatalf("citations %+v (span %q)", cs, cs[0].Span(text))
	}
}
