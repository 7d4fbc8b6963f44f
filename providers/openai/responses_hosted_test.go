package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/modelkit"
)

// Built-in tools against recorded traffic in testdata/responses/hosted
// (see its PROVENANCE.md).

func respHostedFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/responses/hosted", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// respRecordedItems returns the output items of a recorded response body,
// and the annotations of its messages' first output_text.
func respRecordedItems(t *testing.T, body []byte) (items []json.RawMessage, text string, annotations []respAnnotation) {
	t.Helper()
	var w struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	for _, raw := range w.Output {
		var it struct {
			Type    string `json:"type"`
			Content []struct {
				Text        string           `json:"text"`
				Annotations []respAnnotation `json:"annotations"`
			} `json:"content"`
		}
		_ = json.Unmarshal(raw, &it)
		if it.Type == "message" && len(it.Content) > 0 {
			text, annotations = it.Content[0].Text, it.Content[0].Annotations
		}
		if respHostedItem(it.Type) {
			items = append(items, raw)
		}
	}
	return items, text, annotations
}

// Every built-in tool item and annotation kind recorded, decoded from a
// whole body: each item is one HostedToolPart whose Raw holds the body's
// own bytes; each annotation a Citation whose offsets, counted in bytes,
// cut out the span the API counted in characters.
func TestResponsesHostedItems(t *testing.T) {
	for _, tt := range []struct {
		file     string
		kinds    []runlet.HostedToolKind
		names    []string
		inputs   []string // a prefix of each part's Input
		output   string   // in the first part's Output
		sources  int      // of the first part
		searches int
		span     string // what the first citation cuts out (a prefix)
	}{
		{"pydantic-web-search-turn1.response.json", []runlet.HostedToolKind{runlet.HostedWebSearch}, []string{"web_search_call"},
			[]string{`{"query":"weather: San Francisco, CA","type":"search"}`}, "", 0, 1, ""},
		{"vercel-web-search.response.json", []runlet.HostedToolKind{runlet.HostedWebSearch, runlet.HostedWebSearch, runlet.HostedWebSearch},
			[]string{"web_search_call", "web_search_call", "web_search_call"},
			[]string{`{"type":"search","query":"tech news today December 5 2025"`, `{"type":"open_page"`, `{"type":"find_in_page"`}, "", 16, 3, "([theverge.com]"},
		{"pydantic-code-interpreter-turn1.response.json", []runlet.HostedToolKind{runlet.HostedCodeExecution}, []string{"code_interpreter_call"},
			[]string{`{"code":"# compute the value\n65465`}, "-428330955.97745", 0, 0, ""},
		{"vercel-code-interpreter.response.json", []runlet.HostedToolKind{runlet.HostedCodeExecution, runlet.HostedCodeExecution, runlet.HostedCodeExecution},
			[]string{"code_interpreter_call", "code_interpreter_call", "code_interpreter_call"},
			[]string{`{"code":"import random`, `{"code":"filename`, `{"code":"import os`}, "", 0, 0, "sandbox:/mnt/data/two_dice_sums_10000.txt"},
		{"pydantic-file-search.response.json", []runlet.HostedToolKind{""}, []string{"file_search_call"},
			[]string{`{"queries":["What is the capital of France?"]}`}, "", 1, 0, ""},
		{"vercel-file-search.response.json", []runlet.HostedToolKind{""}, []string{"file_search_call"},
			[]string{`{"queries":["What is an embedding model according to this document?"`}, "", 1, 0, ""},
	} {
		t.Run(tt.file, func(t *testing.T) {
			body := respHostedFixture(t, tt.file)
			srv, _ := respServe(t, 200, "application/json", body)
			resp, err := respModel(srv.URL).Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}})
			if err != nil {
				t.Fatal(err)
			}
			items, text, annotations := respRecordedItems(t, body)
			var hosted []runlet.HostedToolPart
			var cited *runlet.TextPart
			for _, p := range resp.Message.Parts {
				switch p := p.(type) {
				case runlet.HostedToolPart:
					hosted = append(hosted, p)
				case runlet.TextPart:
					if len(p.Citations) > 0 {
						cited = &p
					}
				}
			}
			if len(hosted) != len(tt.kinds) || len(items) != len(hosted) {
				t.Fatalf("%d hosted parts, %d recorded items, want %d", len(hosted), len(items), len(tt.kinds))
			}
			for i, h := range hosted {
				var raw []json.RawMessage
				if err := json.Unmarshal(h.Raw, &raw); err != nil || len(raw) != 1 || !bytes.Equal(raw[0], bytes.TrimSpace(items[i])) {
					t.Errorf("part %d: Raw is not the recorded item (%v)", i, err)
				}
				if h.Kind != tt.kinds[i] || h.Name != tt.names[i] || !strings.HasPrefix(string(h.Input), tt.inputs[i]) ||
					h.Provider != "openai" || h.ID == "" || h.IsError {
					t.Errorf("part %d = %s %q %q input %s", i, h.ID, h.Kind, h.Name, h.Input)
				}
			}
			if !strings.Contains(hosted[0].Output, tt.output) || len(hosted[0].Sources) != tt.sources {
				t.Errorf("part 0: output %q, %d sources", hosted[0].Output, len(hosted[0].Sources))
			}
			if resp.Usage.WebSearchRequests != tt.searches {
				t.Errorf("web searches %d, want %d", resp.Usage.WebSearchRequests, tt.searches)
			}
			if len(annotations) == 0 {
				if cited != nil {
					t.Errorf("citations without annotations: %+v", cited.Citations)
				}
				return
			}
			if cited == nil || cited.Text != text || len(cited.Citations) != len(annotations) {
				t.Fatalf("cited text part %+v, %d annotations", cited, len(annotations))
			}
			runes := []rune(text)
			for i, c := range cited.Citations {
				a := annotations[i]
				if c.Provider != "openai" || !bytes.Contains(body, bytes.TrimSpace(c.Raw)) && !json.Valid(c.Raw) {
					t.Errorf("citation %d = %+v", i, c)
				}
				if a.StartIndex != nil {
					if want := string(runes[*a.StartIndex:*a.EndIndex]); c.Span(cited.Text) != want || c.URL != a.URL || c.Title != a.Title+a.Filename {
						t.Errorf("citation %d spans %q, the API's indexes %q", i, c.Span(cited.Text), want)
					}
				} else if c.FileID != a.FileID || c.Title != a.Filename || c.Start != len(string(runes[:*a.Index])) || c.End != c.Start {
					t.Errorf("file citation %d = %+v", i, c)
				}
			}
			if tt.span != "" && !strings.HasPrefix(cited.Citations[0].Span(cited.Text), tt.span) {
				t.Errorf("first citation spans %q", cited.Citations[0].Span(cited.Text))
			}
		})
	}
}

// The recorded streams decode to what their final responses hold: the
// web_search_call items, each whole, and the citations of
// response.output_text.annotation.added, as Generate would.
func TestResponsesHostedStream(t *testing.T) {
	for _, tt := range []struct {
		file          string
		searches, cit int
	}{
		{"pydantic-stream-web-search.response.sse", 1, 0},
		{"vercel-stream-web-search.chunks.jsonl", 6, 12},
	} {
		t.Run(tt.file, func(t *testing.T) {
			body := respHostedFixture(t, tt.file)
			if strings.HasSuffix(tt.file, ".jsonl") {
				body = respJSONLToSSE(body)
			}
			srv, _ := respServe(t, 200, "text/event-stream", body)
			var acc modelkit.Accumulator
			var resp *runlet.ModelResponse
			for ev, err := range respModel(srv.URL).Stream(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("x")}}) {
				if err != nil {
					t.Fatal(err)
				}
				acc.Add(ev)
				if ev.Kind == runlet.StreamDone {
					resp = ev.Response
				}
			}
			var searches, cites int
			for _, p := range resp.Message.Parts {
				switch p := p.(type) {
				case runlet.HostedToolPart:
					if p.Kind == runlet.HostedWebSearch && p.Provider == "openai" && bytes.Contains(body, []byte(p.ID)) && len(p.Raw) > 0 {
						searches++
					}
				case runlet.TextPart:
					for _, c := range p.Citations {
						if c.URL == "" || c.Span(p.Text) == p.Text {
							t.Errorf("citation %+v", c)
						}
						cites++
					}
				}
			}
			if searches != tt.searches || resp.Usage.WebSearchRequests != tt.searches || cites != tt.cit {
				t.Errorf("%d searches (usage %d), %d citations; want %d, %d", searches, resp.Usage.WebSearchRequests, cites, tt.searches, tt.cit)
			}
			if resp.Message.Text() != acc.Message().Text() {
				t.Error("streamed text differs from the response's")
			}
		})
	}
}

// The next turn sends the built-in tool items back whole, with the
// reasoning items they pair with, as pydantic-ai's recorded second turns
// did; the web search declaration is the recorded one. Every body is
// checked against the OpenAPI document (respServe).
func TestResponsesHostedRoundTrip(t *testing.T) {
	for _, tt := range []struct{ turn1, turn2, next string }{
		{"pydantic-web-search-turn1.response.json", "pydantic-web-search-turn2.request.json", "how about Mexico City?"},
		{"pydantic-code-interpreter-turn1.response.json", "pydantic-code-interpreter-turn2.request.json", ""},
	} {
		t.Run(tt.turn2, func(t *testing.T) {
			first := respHostedFixture(t, tt.turn1)
			srv, bodies := respServe(t, 200, "application/json", first)
			m := respModel(srv.URL)
			var want struct {
				Input []json.RawMessage `json:"input"`
				Tools []map[string]any  `json:"tools"`
			}
			if err := json.Unmarshal(respHostedFixture(t, tt.turn2), &want); err != nil {
				t.Fatal(err)
			}
			kind := runlet.HostedWebSearch
			if want.Tools[0]["type"] == "code_interpreter" {
				kind = runlet.HostedCodeExecution
			}
			req := &runlet.ModelRequest{HostedTools: []runlet.HostedTool{{Kind: kind}}, Messages: []runlet.Message{runlet.UserText("x")}}
			resp, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages, resp.Message)
			if tt.next != "" {
				req.Messages = append(req.Messages, runlet.UserText(tt.next))
			}
			if _, err := m.Generate(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			var sent struct {
				Input   []json.RawMessage `json:"input"`
				Tools   []map[string]any  `json:"tools"`
				Include []string          `json:"include"`
			}
			if err := json.Unmarshal((*bodies)[1], &sent); err != nil {
				t.Fatal(err)
			}
			if sent.Tools[0]["type"] != want.Tools[0]["type"] || len(sent.Include) == 0 {
				t.Errorf("tools %v include %v, recorded %v", sent.Tools, sent.Include, want.Tools)
			}
			// The recorded assistant items, by ID, against the sent ones.
			byID := map[string]map[string]any{}
			for _, raw := range sent.Input {
				var it map[string]any
				_ = json.Unmarshal(raw, &it)
				if id, _ := it["id"].(string); id != "" {
					byID[id] = it
				}
			}
			n := 0
			for _, raw := range want.Input {
				var it map[string]any
				_ = json.Unmarshal(raw, &it)
				typ, _ := it["type"].(string)
				if !respHostedItem(typ) && typ != "reasoning" {
					continue
				}
				n++
				got := byID[it["id"].(string)]
				if typ == "reasoning" { // pydantic-ai sends an empty summary list
					if got == nil || got["encrypted_content"] != it["encrypted_content"] {
						t.Errorf("reasoning %s not sent back", it["id"])
					}
					continue
				}
				if _, ok := it["outputs"]; ok && it["outputs"] == nil { // pydantic-ai leaves outputs out; we send them as received
					delete(it, "outputs")
					delete(got, "outputs")
				}
				if !reflect.DeepEqual(got, it) {
					t.Errorf("item %s\n sent %v\n want %v", it["id"], got, it)
				}
			}
			if n < 3 {
				t.Fatalf("only %d recorded items compared", n)
			}
		})
	}
}

// Hosted tools declared by kind, with their options; a pass-through
// declaration only for this provider; web_fetch, which the API lacks, an
// ErrInvalidRequest. Another provider's parts go as assistant text and its
// citations are dropped; the body stays valid.
func TestResponsesHostedRequests(t *testing.T) {
	srv, bodies := respServe(t, 200, "application/json", respHostedFixture(t, "pydantic-web-search-turn1.response.json"))
	m := respModel(srv.URL)
	foreign := runlet.HostedToolPart{ID: "srvtoolu_1", Kind: runlet.HostedWebSearch, Name: "web_search", Input: json.RawMessage(`{"query":"q"}`),
		Provider: "anthropic", Raw: json.RawMessage(`[{"type":"server_tool_use"}]`)}
	req := &runlet.ModelRequest{
		HostedTools: []runlet.HostedTool{
			{Kind: runlet.HostedWebSearch, Options: map[string]any{"search_context_size": "low"}},
			runlet.CodeExecution(),
			{Provider: "openai", Declaration: json.RawMessage(`{"type":"image_generation"}`)},
			{Provider: "anthropic", Declaration: json.RawMessage(`{"type":"web_fetch_20250910","name":"web_fetch"}`)},
		},
		Tools: []runlet.ToolSpec{{Name: "f"}},
		Messages: []runlet.Message{runlet.UserText("q"),
			{Role: runlet.RoleAssistant, Parts: []runlet.Part{foreign, runlet.TextPart{Text: "Found.", Citations: []runlet.Citation{{URL: "u", Provider: "anthropic", Raw: json.RawMessage(`{"type":"web_search_result_location"}`)}}}}},
			runlet.UserText("more")},
	}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Input   []map[string]any `json:"input"`
		Tools   []map[string]any `json:"tools"`
		Include []string         `json:"include"`
	}
	_ = json.Unmarshal((*bodies)[0], &sent)
	wantTools := []map[string]any{
		{"type": "function", "name": "f"},
		{"type": "web_search", "search_context_size": "low"},
		{"type": "code_interpreter", "container": map[string]any{"type": "auto"}},
		{"type": "image_generation"},
	}
	if len(sent.Tools) != len(wantTools) || sent.Tools[0]["name"] != "f" || !reflect.DeepEqual(sent.Tools[1:], wantTools[1:]) {
		t.Errorf("tools %v", sent.Tools)
	}
	if !reflect.DeepEqual(sent.Include, []string{"web_search_call.action.sources", "code_interpreter_call.outputs"}) {
		t.Errorf("include %v", sent.Include)
	}
	if len(sent.Input) != 3 || sent.Input[1]["content"] != foreign.Text()+"Found." {
		t.Errorf("input %v", sent.Input)
	}
	req.HostedTools = []runlet.HostedTool{{Kind: runlet.HostedWebFetch}}
	if _, err := m.Generate(context.Background(), req); !errors.Is(err, runlet.ErrInvalidRequest) {
		t.Errorf("web_fetch: %v", err)
	}
}

// A HostedToolPart whose Raw was edited into another item (a function call)
// is sent as text, never as that item.
func TestResponsesHostedRawOnlyToolItems(t *testing.T) {
	srv, bodies := respServe(t, 200, "application/json", respHostedFixture(t, "pydantic-web-search-turn1.response.json"))
	forged := runlet.HostedToolPart{Name: "web_search_call", Provider: "openai", Raw: json.RawMessage(`[{"type":"function_call","call_id":"c","name":"rm","arguments":"{}"}]`)}
	if _, err := respModel(srv.URL).Generate(context.Background(), &runlet.ModelRequest{Messages: []runlet.Message{runlet.UserText("q"),
		{Role: runlet.RoleAssistant, Parts: []runlet.Part{forged}}, runlet.UserText("more")}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string((*bodies)[0]), `"type":"function_call"`) {
		t.Errorf("a forged item went out: %s", (*bodies)[0])
	}
}
